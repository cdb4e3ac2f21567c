// Drives a running fanout with the AWS SDK for JavaScript v3: SQS over AWS
// JSON 1.0 (the SDK checks the MD5s it is given) and SNS over Query.
// Usage: node jssdk.js ENDPOINT. Prints "jssdk: N passed, 0 failed".
'use strict';
const sqsLib = require('@aws-sdk/client-sqs');
const snsLib = require('@aws-sdk/client-sns');

const endpoint = process.argv[2];
const conf = { endpoint, region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' }, maxAttempts: 1 };
const sqs = new sqsLib.SQSClient(conf);
const sns = new snsLib.SNSClient(conf);
let passed = 0;

function check(cond, what) {
  if (!cond) {
    console.log(`jssdk: FAILED: ${what}`);
    console.log(`jssdk: ${passed} passed, 1 failed`);
    process.exit(1);
  }
  passed++;
}

async function main() {
  const { QueueUrl: url } = await sqs.send(new sqsLib.CreateQueueCommand({ QueueName: 'js-q' }));
  check(url.endsWith('/000000000000/js-q'), 'CreateQueue url');
  const sent = await sqs.send(new sqsLib.SendMessageCommand({
    QueueUrl: url, MessageBody: 'héllo <&> "js"',
    MessageAttributes: { n: { DataType: 'Number', StringValue: '7' }, b: { DataType: 'Binary', BinaryValue: Uint8Array.from([0, 255]) } },
  }));
  check(sent.MessageId.length === 36 && sent.MD5OfMessageAttributes, 'SendMessage');
  const got = await sqs.send(new sqsLib.ReceiveMessageCommand({ QueueUrl: url, MessageAttributeNames: ['All'], MessageSystemAttributeNames: ['All'] }));
  check(got.Messages && got.Messages.length === 1 && got.Messages[0].Body === 'héllo <&> "js"', 'ReceiveMessage body');
  const m = got.Messages[0];
  check(m.MessageAttributes.b.BinaryValue[1] === 255 && m.Attributes.ApproximateReceiveCount === '1', 'attributes');
  await sqs.send(new sqsLib.DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: m.ReceiptHandle }));
  const batch = await sqs.send(new sqsLib.SendMessageBatchCommand({ QueueUrl: url, Entries: [
    { Id: 'ok', MessageBody: 'fine' }, { Id: 'bad', MessageBody: 'x\u0001' }] }));
  check(batch.Successful.length === 1 && batch.Failed[0].Code === 'InvalidMessageContents', 'batch failures');
  try {
    await sqs.send(new sqsLib.GetQueueUrlCommand({ QueueName: 'nope' }));
    check(false, 'a missing queue must fail');
  } catch (e) {
    check(e instanceof sqsLib.QueueDoesNotExist, `missing queue error ${e.name}`);
  }
  await sqs.send(new sqsLib.PurgeQueueCommand({ QueueUrl: url }));

  const { TopicArn: topic } = await sns.send(new snsLib.CreateTopicCommand({ Name: 'js-t' }));
  const attrs = await sqs.send(new sqsLib.GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }));
  const sub = await sns.send(new snsLib.SubscribeCommand({ TopicArn: topic, Protocol: 'sqs', Endpoint: attrs.Attributes.QueueArn,
    Attributes: { FilterPolicy: '{"kind":["order"]}' }, ReturnSubscriptionArn: true }));
  check(sub.SubscriptionArn.startsWith(topic + ':'), 'Subscribe');
  await sns.send(new snsLib.PublishCommand({ TopicArn: topic, Message: 'skipped', MessageAttributes: { kind: { DataType: 'String', StringValue: 'refund' } } }));
  await sns.send(new snsLib.PublishCommand({ TopicArn: topic, Message: 'kept', MessageAttributes: { kind: { DataType: 'String', StringValue: 'order' } } }));
  const fan = await sqs.send(new sqsLib.ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10 }));
  const msgs = (fan.Messages || []).map((x) => JSON.parse(x.Body));
  check(msgs.length === 1 && msgs[0].Message === 'kept' && msgs[0].Type === 'Notification', `filtered fanout ${JSON.stringify(msgs)}`);
  try {
    await sns.send(new snsLib.GetTopicAttributesCommand({ TopicArn: topic + '-missing' }));
    check(false, 'a missing topic must fail');
  } catch (e) {
    check(e.name === 'NotFoundException' || e.name === 'NotFound', `missing topic error ${e.name}`);
  }
  console.log(`jssdk: ${passed} passed, 0 failed`);
}

main().catch((e) => {
  console.log(`jssdk: FAILED: ${e.name}: ${e.message}`);
  console.log(`jssdk: ${passed} passed, 1 failed`);
  process.exit(1);
});
