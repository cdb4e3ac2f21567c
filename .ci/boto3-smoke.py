#!/usr/bin/env python3
"""Drives a running fanout with boto3, which speaks SQS's AWS JSON 1.0
protocol (botocore checks every MD5 it is given) and SNS's Query protocol.
Usage: boto3-smoke.py ENDPOINT. Prints 'boto3-smoke: N passed, 0 failed'."""
import json
import sys
import urllib.error
import urllib.request

import boto3
from botocore.exceptions import ClientError

endpoint = sys.argv[1]
kw = dict(endpoint_url=endpoint, region_name="us-east-1",
          aws_access_key_id="test", aws_secret_access_key="test")
sqs = boto3.client("sqs", **kw)
sns = boto3.client("sns", **kw)
passed = 0


def check(cond, what):
    global passed
    if not cond:
        print("boto3-smoke: FAILED:", what)
        print("boto3-smoke: %d passed, 1 failed" % passed)
        sys.exit(1)
    passed += 1


url = sqs.create_queue(QueueName="boto3-q")["QueueUrl"]
check(url.endswith("/000000000000/boto3-q"), "create_queue url")
sent = sqs.send_message(QueueUrl=url, MessageBody="héllo <&> \"quoted\"",
                        MessageAttributes={"n": {"DataType": "Number", "StringValue": "42"},
                                           "b": {"DataType": "Binary", "BinaryValue": b"\x00\xff"}})
check(len(sent["MessageId"]) == 36, "send_message id")
got = sqs.receive_message(QueueUrl=url, MessageAttributeNames=["All"], AttributeNames=["All"])
msgs = got.get("Messages", [])
check(len(msgs) == 1 and msgs[0]["Body"] == "héllo <&> \"quoted\"", "receive body")
check(msgs[0]["MessageAttributes"]["b"]["BinaryValue"] == b"\x00\xff", "binary attribute")
check(msgs[0]["Attributes"]["ApproximateReceiveCount"] == "1", "system attributes")
sqs.delete_message(QueueUrl=url, ReceiptHandle=msgs[0]["ReceiptHandle"])
batch = sqs.send_message_batch(QueueUrl=url, Entries=[
    {"Id": "ok", "MessageBody": "fine"}, {"Id": "bad", "MessageBody": "x\x01"}])
check(len(batch["Successful"]) == 1 and batch["Failed"][0]["Code"] == "InvalidMessageContents", "batch failures")
try:
    sqs.get_queue_url(QueueName="nope")
    check(False, "missing queue must fail")
except ClientError as e:
    check(e.response["Error"]["Code"] in ("AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist"), "error code " + e.response["Error"]["Code"])

fifo = sqs.create_queue(QueueName="boto3.fifo", Attributes={"FifoQueue": "true", "ContentBasedDeduplication": "true"})["QueueUrl"]
a = sqs.send_message(QueueUrl=fifo, MessageBody="one", MessageGroupId="g")
b = sqs.send_message(QueueUrl=fifo, MessageBody="one", MessageGroupId="g")
check(a["MessageId"] == b["MessageId"] and a["SequenceNumber"] == b["SequenceNumber"], "fifo dedup")

topic = sns.create_topic(Name="boto3-t")["TopicArn"]
qarn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
sub = sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=qarn, Attributes={"RawMessageDelivery": "true"},
                    ReturnSubscriptionArn=True)["SubscriptionArn"]
check(sub.startswith(topic + ":"), "subscribe arn")
sns.publish(TopicArn=topic, Message="from sns", MessageAttributes={"k": {"DataType": "String", "StringValue": "v"}})
msgs = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, MessageAttributeNames=["All"]).get("Messages", [])
bodies = sorted(m["Body"] for m in msgs)
check("from sns" in bodies, "raw delivery body %r" % bodies)
raw = [m for m in msgs if m["Body"] == "from sns"][0]
check(raw["MessageAttributes"]["k"]["StringValue"] == "v", "raw delivery attributes")
sns.set_subscription_attributes(SubscriptionArn=sub, AttributeName="RawMessageDelivery", AttributeValue="false")
sns.publish(TopicArn=topic, Message="enveloped", Subject="s")
env = [json.loads(m["Body"]) for m in sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", [])
       if m["Body"].startswith("{")]
check(any(e.get("Type") == "Notification" and e.get("Message") == "enveloped" and e.get("Subject") == "s" for e in env),
      "envelope %r" % env)
try:
    sns.get_topic_attributes(TopicArn=topic + "-missing")
    check(False, "missing topic must fail")
except ClientError as e:
    check(e.response["Error"]["Code"] == "NotFound" and e.response["ResponseMetadata"]["HTTPStatusCode"] == 404, "sns NotFound")

# Custom DataType labels: good ones round-trip; one holding bytes no reply
# could carry (sent raw, as no SDK would) is refused, so a receive of the
# other 10 gets all 10 (it used to leave them in flight: UnicodeDecodeError).
typed = sqs.create_queue(QueueName="boto3-types")["QueueUrl"]
labels = ["String.custom-\u00fc", "Number.float", "Binary.gif", "String.a b/c:d"]
for i in range(10):
    dt = labels[i % len(labels)]
    val = {"BinaryValue": b"\x01"} if dt.startswith("Binary") else {"StringValue": str(i)}
    sqs.send_message(QueueUrl=typed, MessageBody="m%d" % i, MessageAttributes={"t": dict(DataType=dt, **val)})
raw_body = (b'{"QueueUrl":"' + typed.encode() + b'","MessageBody":"bad",'
            b'"MessageAttributes":{"t":{"DataType":"String.\xff\\u0001","StringValue":"v"}}}')
req = urllib.request.Request(endpoint + "/", data=raw_body, method="POST", headers={
    "Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "AmazonSQS.SendMessage"})
try:
    urllib.request.urlopen(req)
    check(False, "a DataType with invalid bytes must be refused")
except urllib.error.HTTPError as e:
    check(e.code == 400 and b"InvalidParameterValue" in e.read(), "invalid DataType refused")
try:
    sqs.send_message(QueueUrl=typed, MessageBody="bad", MessageAttributes={"t": {"DataType": "String.\x01", "StringValue": "v"}})
    check(False, "a DataType with a control character must be refused")
except ClientError as e:
    check(e.response["Error"]["Code"] in ("InvalidParameterValue", "InvalidParameterValueException"), "control DataType refused")
got = []
for _ in range(5):
    got += sqs.receive_message(QueueUrl=typed, MaxNumberOfMessages=10, MessageAttributeNames=["All"]).get("Messages", [])
    if len(got) >= 10:
        break
check(sorted(m["Body"] for m in got) == sorted("m%d" % i for i in range(10)), "all 10 typed messages received")
check(all(m["MessageAttributes"]["t"]["DataType"] == labels[int(m["Body"][1:]) % len(labels)] for m in got), "custom labels round-trip")

print("boto3-smoke: %d passed, 0 failed" % passed)
