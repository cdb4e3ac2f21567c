package topology_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/topology"
)

func do(t *testing.T, method, url, contentType, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// TestTopologyEndpoints drives /_fanout/topology over HTTP: apply, apply
// again (no changes), export, prune, errors, and the schema.
func TestTopologyEndpoints(t *testing.T) {
	t.Parallel()
	srv := start(t, fanout.Options{})
	base := srv.URL() + "/_fanout/topology"
	file, _ := os.ReadFile("testdata/issue.yaml")

	status, body := do(t, "POST", base, "application/yaml", string(file))
	var report topology.Report
	if status != 200 || json.Unmarshal([]byte(body), &report) != nil || len(report.Changes) != 11 {
		t.Fatalf("apply: %d %s", status, body)
	}
	if status, body = do(t, "POST", base, "application/yaml", string(file)); status != 200 || !strings.Contains(body, `"changes": []`) {
		t.Errorf("apply again: %d %s", status, body)
	}
	status, body = do(t, "GET", base, "", "")
	if status != 200 || !strings.Contains(body, "billing:") {
		t.Fatalf("export: %d %s", status, body)
	}
	exported, err := topology.Parse([]byte(body), "export")
	if err != nil {
		t.Fatalf("the export does not parse: %v", err)
	}
	if len(exported.Queues) != 4 || len(exported.Topics["orders"].Subscriptions) != 4 {
		t.Errorf("export: %s", body)
	}
	if status, body = do(t, "GET", base+"?format=json", "", ""); status != 200 || !strings.HasPrefix(body, "{") {
		t.Errorf("export as JSON: %d %s", status, body)
	}

	status, body = do(t, "POST", base+"?prune=true&dryRun=true", "application/json", `{"queues": {"billing": {}}}`)
	if status != 200 || strings.Count(body, `"action": "delete"`) != 5 {
		t.Errorf("dry-run prune: %d %s", status, body)
	}
	if n := len(srv.SQS().ListQueues("")); n != 4 {
		t.Errorf("a dry run deleted queues: %d left", n)
	}

	status, body = do(t, "POST", base, "application/yaml", "queues:\n  a: {attributes: {VisibilityTimeout: -1}}\n  b: {tagz: 1}\n")
	if status != 400 || !strings.Contains(body, `"path": "queues.b.tagz"`) || !strings.Contains(body, `"line": 3`) {
		t.Errorf("bad file: %d %s", status, body)
	}
	if status, _ = do(t, "POST", base, "text/plain", string(file)); status != http.StatusUnsupportedMediaType {
		t.Errorf("text/plain (which a web page can post): %d", status)
	}

	status, body = do(t, "GET", base+"/schema.json", "", "")
	if status != 200 || !strings.Contains(body, `"$schema"`) {
		t.Errorf("schema: %d %.80s", status, body)
	}
}
