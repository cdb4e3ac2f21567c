package main

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// The null server answers the calls the benchmark makes with canned but
// SDK-valid responses and stores nothing. Measured next to fanout with the
// same clients, it shows how much of a figure is client and HTTP cost.

const (
	nullAccount   = "000000000000"
	nullRegion    = "us-east-1"
	nullMessageID = "00000000-0000-4000-8000-000000000000"
	maxBodyBytes  = 4 << 20 // larger than any valid SQS/SNS request
)

var hdrRequestID = []string{nullMessageID}

// cannedReceives returns ready ReceiveMessage responses: element n holds n
// messages with bodies of bodySize bytes, as big as the benchmark's own, so
// the client parses and the network carries as much as with fanout.
func cannedReceives(bodySize int) *[11][]byte { return cannedReceivesOf(payload(bodySize)) }

// cannedReceivesOf returns ready ReceiveMessage responses whose messages
// have the given body.
func cannedReceivesOf(body string) *[11][]byte {
	var out [11][]byte
	for n := range out {
		type msg struct {
			MessageId, ReceiptHandle, MD5OfBody, Body string
		}
		msgs := make([]msg, n)
		for i := range msgs {
			msgs[i] = msg{
				MessageId:     nullMessageID,
				ReceiptHandle: fmt.Sprintf("null-receipt-%020d", i),
				MD5OfBody:     md5Hex(body),
				Body:          body,
			}
		}
		out[n], _ = json.Marshal(map[string]any{"Messages": msgs})
	}
	return &out
}

func md5Hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// nullHandler returns the null server's http.Handler; received messages
// have bodies of the first of sizes bytes, or of the size a queue's name
// ends in (the tool names queues after variants, e.g. ...-send-batch-64B).
func nullHandler(sizes []int) http.Handler {
	canned := make([]sizedReceives, len(sizes))
	for i, n := range sizes {
		canned[i] = sizedReceives{tag: "-" + strconv.Itoa(n) + "B", replies: cannedReceives(n)}
	}
	envs := newNullEnvelopes(sizes)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/_fanout/health" {
			w.WriteHeader(http.StatusOK)
			return
		}
		if r.Method != http.MethodPost {
			http.Error(w, "POST only", http.StatusMethodNotAllowed)
			return
		}
		buf := getBuf()
		defer putBuf(buf)
		body, err := readBody(r, buf)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header()["X-Amzn-Requestid"] = hdrRequestID
		if target := r.Header.Get("X-Amz-Target"); target != "" {
			nullSQS(w, r, strings.TrimPrefix(target, "AmazonSQS."), body, canned, envs)
			return
		}
		// As fanout does, a Query call must carry a signature (the null
		// server does not check it).
		if !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 ") {
			w.Header().Set("Content-Type", "text/xml")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprintf(w, `<ErrorResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><Error><Type>Sender</Type>`+
				`<Code>MissingAuthenticationToken</Code><Message>Request is missing Authentication Token</Message></Error><RequestId>%s</RequestId></ErrorResponse>`, nullMessageID)
			return
		}
		nullSNS(w, r, body, envs)
	})
}

// sizedReceives is the canned ReceiveMessage replies for one body size and
// the queue-name tag that selects them.
type sizedReceives struct {
	tag     string
	replies *[11][]byte
}

// helloHandler is the floor under the null server: it reads the body and
// answers 200 with a constant reply shaped like a 10-entry
// SendMessageBatch success, so the client parses as much as from the null
// server and the difference is the null server's own work (parsing, MD5s,
// ids). A null server close to it in throughput does little beyond what any
// handler must.
func helloHandler() http.Handler {
	reply := []byte(`{"Successful":[`)
	for i := range 10 {
		if i > 0 {
			reply = append(reply, ',')
		}
		reply = fmt.Appendf(reply, `{"Id":"%d","MessageId":"%s","MD5OfMessageBody":"%032x"}`, i, nullMessageID, i)
	}
	reply = append(reply, `],"Failed":[]}`...)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		buf := getBuf()
		_, err := readBody(r, buf)
		putBuf(buf)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header()["Content-Type"] = hdrJSON
		w.Write(reply)
	})
}

// Request and reply buffers are pooled: the null server should allocate
// little more than net/http itself does.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

func getBuf() *[]byte  { return bufPool.Get().(*[]byte) }
func putBuf(b *[]byte) { *b = (*b)[:0]; bufPool.Put(b) }

// readBody reads the request body into *buf (growing it as needed).
func readBody(r *http.Request, buf *[]byte) ([]byte, error) {
	b := *buf
	if n := r.ContentLength; n > maxBodyBytes {
		return nil, errors.New("request too large")
	} else if n > int64(cap(b)) {
		b = make([]byte, 0, n)
	}
	for {
		if len(b) == cap(b) {
			if len(b) >= maxBodyBytes {
				return nil, errors.New("request too large")
			}
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Body.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	*buf = b
	return b, nil
}

// nullIDs makes distinct, well-formed message ids from a counter: as much
// work per message as an id needs, no more.
var nullIDs atomic.Uint64

func appendNullID(out []byte) []byte {
	const hexdig = "0123456789abcdef"
	n := nullIDs.Add(1)
	out = append(out, "00000000-0000-4000-8000-"...)
	for shift := 44; shift >= 0; shift -= 4 {
		out = append(out, hexdig[n>>uint(shift)&0xf])
	}
	return out
}

// nullSQS answers one SQS JSON 1.0 call.
func nullSQS(w http.ResponseWriter, r *http.Request, action string, body []byte, canned []sizedReceives, envs *nullEnvelopes) {
	// Raw JSON tokens of the members the responses need.
	var (
		queueURL, queueName, msgBody, maxMsgs []byte
		entries                               []nullEntry
		cur                                   nullEntry
	)
	err := scanJSON(body, func(depth int, key, raw []byte) {
		switch depth {
		case 1:
			switch string(key) {
			case "QueueUrl":
				queueURL = raw
			case "QueueName":
				queueName = raw
			case "MessageBody":
				msgBody = raw
			case "MaxNumberOfMessages":
				maxMsgs = raw
			}
		case 2: // batch entries
			switch string(key) {
			case "Id":
				cur.id = raw
			case "MessageBody":
				cur.body = raw
			}
		}
	}, func(depth int) {
		if depth == 2 && cur.id != nil {
			entries = append(entries, cur)
		}
		cur = nullEntry{}
	})
	if err != nil {
		sqsError(w, "InvalidParameterValue", err.Error())
		return
	}
	ob := getBuf()
	defer putBuf(ob)
	out := *ob
	defer func() { *ob = out }()
	ok := true
	switch action {
	case "SendMessage":
		out = append(out, `{"MessageId":"`...)
		out = appendNullID(out)
		out = append(out, `","MD5OfMessageBody":"`...)
		out, ok = appendMD5OfJSONString(out, msgBody)
		out = append(out, `"}`...)
		floor.keep(out, msgBody)
	case "SendMessageBatch":
		out = append(out, `{"Successful":[`...)
		for i, e := range entries {
			if i > 0 {
				out = append(out, ',')
			}
			at := len(out)
			out = append(out, `{"Id":`...)
			out = append(out, e.id...) // already a JSON string token
			out = append(out, `,"MessageId":"`...)
			out = appendNullID(out)
			out = append(out, `","MD5OfMessageBody":"`...)
			if out, ok = appendMD5OfJSONString(out, e.body); !ok {
				break
			}
			out = append(out, `"}`...)
			floor.keep(out[at:], e.body) // its id and MD5, as text
		}
		out = append(out, `],"Failed":[]}`...)
	case "ReceiveMessage":
		n, err := strconv.Atoi(string(maxMsgs))
		if err != nil || n < 1 || n > 10 {
			n = 1 // the SQS default
		}
		u, _ := jsonString(queueURL)
		replies := envs.receives(u)
		if replies == nil {
			replies = canned[0].replies
			for _, c := range canned[1:] {
				if bytes.Contains(queueURL, []byte(c.tag)) {
					replies = c.replies
				}
			}
		}
		// The canned reply is shared: written as is, never pooled.
		w.Header()["Content-Type"] = hdrJSON
		w.Write(replies[n])
		return
	case "DeleteMessageBatch", "ChangeMessageVisibilityBatch":
		out = append(out, `{"Successful":[`...)
		for i, e := range entries {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, `{"Id":`...)
			out = append(out, e.id...)
			out = append(out, '}')
		}
		out = append(out, `],"Failed":[]}`...)
	case "CreateQueue", "GetQueueUrl":
		name, _ := jsonString(queueName)
		out, _ = json.Marshal(map[string]string{"QueueUrl": "http://" + r.Host + "/" + nullAccount + "/" + name})
	case "GetQueueAttributes":
		u, _ := jsonString(queueURL)
		out, _ = json.Marshal(map[string]map[string]string{"Attributes": {
			"QueueArn":                    "arn:aws:sqs:" + nullRegion + ":" + nullAccount + ":" + u[strings.LastIndexByte(u, '/')+1:],
			"ApproximateNumberOfMessages": "0",
		}})
	case "ListQueues":
		out = []byte(`{"QueueUrls":[]}`)
	case "DeleteQueue", "PurgeQueue":
		floor.reset() // the tool ends each run so: the next starts from nothing kept
		out = []byte(`{}`)
	case "DeleteMessage", "SetQueueAttributes", "ChangeMessageVisibility", "TagQueue":
		out = []byte(`{}`)
	default:
		sqsError(w, "UnsupportedOperation", "null server does not implement "+action)
		return
	}
	if !ok {
		sqsError(w, "InvalidParameterValue", "MessageBody must be a JSON string")
		return
	}
	w.Header()["Content-Type"] = hdrJSON
	w.Write(out)
}

// nullEntry is one batch entry's raw Id and MessageBody tokens.
type nullEntry struct{ id, body []byte }

func sqsError(w http.ResponseWriter, code, msg string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.WriteHeader(http.StatusBadRequest)
	out, _ := json.Marshal(map[string]string{"__type": "com.amazonaws.sqs#" + code, "message": msg})
	w.Write(out)
}

// nullSNS answers one SNS Query call with an XML response.
func nullSNS(w http.ResponseWriter, r *http.Request, body []byte, envs *nullEnvelopes) {
	form, err := parseForm(body, snsKeys)
	if err != nil {
		snsError(w, "InvalidParameter", err.Error())
		return
	}
	action := form.get("Action")
	var result string // inner XML of <ActionResult>
	switch action {
	case "Publish":
		id := nullMessageID
		if topic := form.get("TopicArn"); envs.signs(topic) {
			msg, err := parseForm(body, publishKeys)
			if err != nil {
				snsError(w, "InvalidParameter", err.Error())
				return
			}
			id = string(appendNullID(nil))
			if _, err := envs.sign(msg.get("Message"), id, msg.get("Subject"), topic, time.Now()); err != nil {
				snsError(w, "InternalError", err.Error())
				return
			}
		}
		result = "<MessageId>" + id + "</MessageId>"
	case "CreateTopic":
		result = "<TopicArn>" + xmlText("arn:aws:sns:"+nullRegion+":"+nullAccount+":"+form.get("Name")) + "</TopicArn>"
	case "Subscribe":
		sub, err := parseForm(body, subscribeKeys)
		if err == nil {
			err = envs.subscribe(sub)
		}
		if err != nil {
			snsError(w, "InvalidParameter", err.Error())
			return
		}
		result = "<SubscriptionArn>" + xmlText(form.get("TopicArn")+":"+nullMessageID) + "</SubscriptionArn>"
	case "DeleteTopic", "Unsubscribe", "SetSubscriptionAttributes", "SetTopicAttributes":
	default:
		snsError(w, "InvalidAction", "null server does not implement "+action)
		return
	}
	w.Header().Set("Content-Type", "text/xml")
	fmt.Fprintf(w, `<%sResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><%sResult>%s</%sResult>`+
		`<ResponseMetadata><RequestId>%s</RequestId></ResponseMetadata></%sResponse>`,
		action, action, result, action, nullMessageID, action)
}

func snsError(w http.ResponseWriter, code, msg string) {
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(http.StatusBadRequest)
	fmt.Fprintf(w, `<ErrorResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><Error><Type>Sender</Type>`+
		`<Code>%s</Code><Message>%s</Message></Error><RequestId>%s</RequestId></ErrorResponse>`,
		code, xmlText(msg), nullMessageID)
}

func xmlText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

// formValues is a parsed form body; only the first value of a key matters.
type formValues map[string]string

func (f formValues) get(k string) string { return f[k] }

// The form keys each kind of SNS call reads; a publish to a topic that does
// not sign never decodes its message.
var (
	snsKeys       = func(k string) bool { return k == "Action" || k == "Name" || k == "TopicArn" }
	publishKeys   = func(k string) bool { return k == "Message" || k == "Subject" }
	subscribeKeys = func(k string) bool {
		return k == "TopicArn" || k == "Protocol" || k == "Endpoint" || strings.HasPrefix(k, "Attributes.entry.")
	}
)

// parseForm decodes the keys of an x-www-form-urlencoded body that keep
// accepts, skipping the rest so Publish stays cheap.
func parseForm(body []byte, keep func(string) bool) (formValues, error) {
	f := formValues{}
	for s := string(body); s != ""; {
		var kv string
		kv, s, _ = strings.Cut(s, "&")
		k, v, _ := strings.Cut(kv, "=")
		if !keep(k) {
			continue
		}
		v, err := urlUnescape(v)
		if err != nil {
			return nil, err
		}
		f[k] = v
	}
	return f, nil
}

// urlUnescape decodes a form value ("+" is a space).
func urlUnescape(s string) (string, error) {
	if !strings.ContainsAny(s, "%+") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '+':
			b.WriteByte(' ')
		case '%':
			if i+2 >= len(s) {
				return "", errors.New("bad %-escape in form")
			}
			hi, lo := unhex(s[i+1]), unhex(s[i+2])
			if hi < 0 || lo < 0 {
				return "", errors.New("bad %-escape in form")
			}
			b.WriteByte(byte(hi<<4 | lo))
			i += 2
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// serveNull runs the null server on addr until SIGTERM or SIGINT, and its
// CPU profile on pprofAddr unless that is empty. It is the
// hidden --serve-null mode, so the null target is a subprocess exactly like
// fanout and its CPU can be read the same way.
func serveNull(addr, pprofAddr string, sizes []int, hello bool) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	if pprofAddr != "" {
		// On a listener of its own, so the handler measured stays as lean
		// with --cpu-profile as without it.
		pl, err := net.Listen("tcp", pprofAddr)
		if err != nil {
			return err
		}
		go serveProfile(pl)
	}
	h := nullHandler(sizes)
	if hello {
		h = helloHandler()
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// Nothing is stored, so there is nothing to finish gracefully; Shutdown
	// would also wait on the client's pre-dialled, never-used connections.
	return srv.Close()
}

// serveProfile serves the CPU profile of this process on l, where
// fetchProfile asks for fanout's.
func serveProfile(l net.Listener) error {
	mux := http.NewServeMux()
	mux.HandleFunc(profilePath, pprof.Profile)
	return http.Serve(l, mux)
}
