#!/usr/bin/env bash
# cli-smoke: builds fanout, starts it on a free loopback port and drives its
# SQS API with Debian's AWS CLI 2.9 (/usr/bin/aws), which speaks the Query
# (XML) protocol. Prints "cli-smoke: N passed, 0 failed" when every check
# passes; exits non-zero at the first failure.
set -euo pipefail

cd "$(dirname "$0")/.."

AWS=/usr/bin/aws
passed=0

# Tools the checks need; the Debian packages are installed when missing and
# this runs as root (as CI does).
need=()
[[ -x $AWS ]] || need+=(awscli)
command -v jq >/dev/null || need+=(jq)
command -v curl >/dev/null || need+=(curl)
if ((${#need[@]})); then
	if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
		echo "cli-smoke: installing ${need[*]}" >&2
		apt-get update -qq >/dev/null
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
	else
		echo "cli-smoke: missing ${need[*]}" >&2
		exit 1
	fi
fi

tmp=$(mktemp -d)
server_pid=""
cleanup() {
	if [[ -n $server_pid ]]; then
		kill "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*" >&2
	if [[ -f $tmp/server.log ]]; then
		echo "--- fanout log (last 20 lines)" >&2
		tail -n 20 "$tmp/server.log" >&2 || true
	fi
	echo "cli-smoke: $passed passed, 1 failed"
	exit 1
}

ok() {
	passed=$((passed + 1))
	echo "ok $passed - $*"
}

# expect_eq NAME GOT WANT
expect_eq() {
	if [[ $2 == "$3" ]]; then
		ok "$1"
	else
		fail "$1: got '$2', want '$3'"
	fi
}

# A command that fails outside a check fails the run the same way.
trap 'fail "command failed (line $LINENO): $BASH_COMMAND"' ERR

md5() { printf '%s' "$1" | md5sum | cut -d' ' -f1; }

# Dummy credentials and region, and nothing from the user's own AWS config.
export AWS_ACCESS_KEY_ID=AKIDCLISMOKE
export AWS_SECRET_ACCESS_KEY=cli-smoke-secret
unset AWS_SESSION_TOKEN AWS_PROFILE
export AWS_DEFAULT_REGION=us-east-1 AWS_REGION=us-east-1
export AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null
export AWS_EC2_METADATA_DISABLED=true AWS_PAGER=""

go build -o "$tmp/fanout" ./cmd/fanout
ok "go build ./cmd/fanout"

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Start fanout; another process may take the port between choosing and
# binding it, so try a few ports.
endpoint=""
for _ in 1 2 3; do
	port=$(free_port)
	"$tmp/fanout" --addr "127.0.0.1:$port" --log-level warn >"$tmp/server.log" 2>&1 &
	server_pid=$!
	for _ in $(seq 100); do
		if curl -fsS "http://127.0.0.1:$port/_fanout/health" >"$tmp/health.json" 2>/dev/null; then
			endpoint="http://127.0.0.1:$port"
			break
		fi
		kill -0 "$server_pid" 2>/dev/null || break
		sleep 0.1
	done
	[[ -n $endpoint ]] && break
	kill "$server_pid" 2>/dev/null || true
	wait "$server_pid" 2>/dev/null || true
	server_pid=""
done
[[ -n $endpoint ]] || fail "fanout did not become healthy"
expect_eq "GET /_fanout/health" "$(jq -r .status "$tmp/health.json")" ok

sqs() { "$AWS" --endpoint-url "$endpoint" --output json sqs "$@"; }

queue="cli-smoke-$RANDOM$RANDOM"

# create-queue / get-queue-url
url=$(sqs create-queue --queue-name "$queue" | jq -r .QueueUrl)
expect_eq "create-queue returns the queue URL" "$url" "$endpoint/000000000000/$queue"
expect_eq "get-queue-url" "$(sqs get-queue-url --queue-name "$queue" | jq -r .QueueUrl)" "$url"

# send-message with a message attribute; the body needs XML escaping (a CR
# survives an XML parser only as a character reference).
body=$'hello <smoke> & "quotes" \'apostrophes\' ünïcode\r\nsecond line\r\n'
sqs send-message --queue-url "$url" --message-body "$body" \
	--message-attributes '{"color":{"DataType":"String","StringValue":"blue"},"n":{"DataType":"Number","StringValue":"7"}}' \
	>"$tmp/send.json"
expect_eq "send-message MD5OfMessageBody" "$(jq -r .MD5OfMessageBody "$tmp/send.json")" "$(md5 "$body")"
attrs_md5=$(jq -r .MD5OfMessageAttributes "$tmp/send.json")
# The digest of the two attributes, built as the SQS developer guide says:
# sorted names, each length-prefixed name, type, transport byte 1, value.
want_attrs_md5=$(python3 - <<'EOF'
import hashlib, struct
def f(b): return struct.pack(">I", len(b)) + b
buf = b""
for name, typ, val in sorted([("color", "String", "blue"), ("n", "Number", "7")]):
    buf += f(name.encode()) + f(typ.encode()) + b"\x01" + f(val.encode())
print(hashlib.md5(buf).hexdigest())
EOF
)
expect_eq "send-message MD5OfMessageAttributes" "$attrs_md5" "$want_attrs_md5"
message_id=$(jq -r .MessageId "$tmp/send.json")

# receive-message: body, MD5s and attributes as sent.
sqs receive-message --queue-url "$url" --message-attribute-names All --attribute-names All \
	--wait-time-seconds 1 >"$tmp/recv.json"
expect_eq "receive-message returns one message" "$(jq '.Messages | length' "$tmp/recv.json")" 1
expect_eq "receive-message MessageId" "$(jq -r '.Messages[0].MessageId' "$tmp/recv.json")" "$message_id"
# Compared inside jq: $(...) would drop the body's trailing newline.
if jq -e --arg want "$body" '.Messages[0].Body == $want' "$tmp/recv.json" >/dev/null; then
	ok "receive-message Body"
else
	fail "receive-message Body: got $(jq '.Messages[0].Body' "$tmp/recv.json"), want $(jq -n --arg b "$body" '$b')"
fi
expect_eq "receive-message MD5OfBody is the received body's" "$(jq -j '.Messages[0].Body' "$tmp/recv.json" | md5sum | cut -d' ' -f1)" "$(md5 "$body")"
expect_eq "receive-message MD5OfBody" "$(jq -r '.Messages[0].MD5OfBody' "$tmp/recv.json")" "$(md5 "$body")"
expect_eq "receive-message attribute" "$(jq -r '.Messages[0].MessageAttributes.color.StringValue' "$tmp/recv.json")" blue
expect_eq "receive-message MD5OfMessageAttributes" "$(jq -r '.Messages[0].MD5OfMessageAttributes' "$tmp/recv.json")" "$attrs_md5"
expect_eq "receive-message ApproximateReceiveCount" "$(jq -r '.Messages[0].Attributes.ApproximateReceiveCount' "$tmp/recv.json")" 1
handle=$(jq -r '.Messages[0].ReceiptHandle' "$tmp/recv.json")

# delete-message
sqs delete-message --queue-url "$url" --receipt-handle "$handle"
ok "delete-message"

# send-message-batch
sqs send-message-batch --queue-url "$url" --entries \
	'[{"Id":"a","MessageBody":"batch one"},{"Id":"b","MessageBody":"batch two"},{"Id":"c","MessageBody":"batch three","DelaySeconds":0}]' \
	>"$tmp/batch.json"
expect_eq "send-message-batch successful entries" "$(jq '.Successful | length' "$tmp/batch.json")" 3
expect_eq "send-message-batch failed entries" "$(jq '.Failed // [] | length' "$tmp/batch.json")" 0
expect_eq "send-message-batch MD5 of entry b" "$(jq -r '.Successful[] | select(.Id == "b") | .MD5OfMessageBody' "$tmp/batch.json")" "$(md5 "batch two")"

# get-queue-attributes
sqs get-queue-attributes --queue-url "$url" --attribute-names All >"$tmp/attrs.json"
expect_eq "get-queue-attributes ApproximateNumberOfMessages" "$(jq -r .Attributes.ApproximateNumberOfMessages "$tmp/attrs.json")" 3
expect_eq "get-queue-attributes VisibilityTimeout" "$(jq -r .Attributes.VisibilityTimeout "$tmp/attrs.json")" 30
expect_eq "get-queue-attributes QueueArn" "$(jq -r .Attributes.QueueArn "$tmp/attrs.json")" "arn:aws:sqs:us-east-1:000000000000:$queue"

# An error: the CLI exits non-zero with the Query error code.
if sqs get-queue-url --queue-name "$queue-missing" >"$tmp/err.out" 2>"$tmp/err.txt"; then
	fail "get-queue-url of a missing queue succeeded"
fi
if grep -q "AWS.SimpleQueueService.NonExistentQueue" "$tmp/err.txt"; then
	ok "get-queue-url of a missing queue fails with AWS.SimpleQueueService.NonExistentQueue"
else
	fail "get-queue-url of a missing queue: stderr was: $(cat "$tmp/err.txt")"
fi

# delete-queue
sqs delete-queue --queue-url "$url"
ok "delete-queue"
listed=$(sqs list-queues --queue-name-prefix "$queue" | jq -rs '.[0].QueueUrls // [] | length')
expect_eq "list-queues after delete-queue" "$listed" 0

echo "cli-smoke: $passed passed, 0 failed"
