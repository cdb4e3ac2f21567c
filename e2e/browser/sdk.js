// The page's script: the AWS SDK for JavaScript v3 as a browser app uses it,
// bundled at test time by esbuild (browser_test.go). window.fanoutRun calls
// SQS (AWS JSON 1.0) and SNS (Query) on a fanout of another origin and
// resolves to what it saw, or to the error the browser gave.
import { SQSClient, CreateQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageCommand } from "@aws-sdk/client-sqs";
import { SNSClient, CreateTopicCommand, PublishCommand, SubscribeCommand } from "@aws-sdk/client-sns";

window.fanoutRun = async (endpoint) => {
  const config = { endpoint, region: "us-east-1", credentials: { accessKeyId: "test", secretAccessKey: "test" }, maxAttempts: 1 };
  const sqs = new SQSClient(config);
  const sns = new SNSClient(config);
  try {
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: "browser" }));
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: "from the page" }));
    const attrs = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["QueueArn"] }));
    const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: "browser" }));
    await sns.send(new SubscribeCommand({ TopicArn, Protocol: "sqs", Endpoint: attrs.Attributes.QueueArn, Attributes: { RawMessageDelivery: "true" } }));
    const pub = await sns.send(new PublishCommand({ TopicArn, Message: "published by the page" }));
    const got = await sqs.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10 }));
    return JSON.stringify({ ok: true, queueUrl: QueueUrl, topicArn: TopicArn, messageId: pub.MessageId,
      bodies: (got.Messages || []).map((m) => m.Body).sort(), requestId: pub.$metadata.requestId });
  } catch (e) {
    return JSON.stringify({ ok: false, name: e.name, message: String(e.message) });
  }
};
