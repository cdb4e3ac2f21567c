package iampolicy

import "testing"

func TestAddAndRemoveStatements(t *testing.T) {
	t.Parallel()
	d := &Document{Version: "2008-10-17", ID: "q/SQSDefaultPolicy"}
	d.AddAllow("one", []string{AccountPrincipal("111122223333")}, Prefixed("SQS:", []string{"SendMessage"}), "arn:q")
	d.AddAllow("two", []string{AccountPrincipal("arn:aws:iam::1:user/u"), AccountPrincipal("2")}, Prefixed("SQS:", []string{"A", "B"}), "arn:q")
	want := `{"Version":"2008-10-17","Id":"q/SQSDefaultPolicy","Statement":[{"Sid":"one","Effect":"Allow","Principal":{"AWS":"arn:aws:iam::111122223333:root"},"Action":"SQS:SendMessage","Resource":"arn:q"},{"Sid":"two","Effect":"Allow","Principal":{"AWS":["arn:aws:iam::1:user/u","arn:aws:iam::2:root"]},"Action":["SQS:A","SQS:B"],"Resource":"arn:q"}]}`
	if d.String() != want {
		t.Fatalf("got  %s\nwant %s", d, want)
	}
	if !d.Has("one") || d.Has("three") {
		t.Fatal("Has")
	}
	if !d.Remove("one") || d.Remove("one") || len(d.Statement) != 1 {
		t.Fatal("Remove")
	}
	p, err := Parse(want)
	if err != nil || len(p.Statement) != 2 {
		t.Fatalf("Parse: %v", err)
	}
	if _, err := Parse("nope"); err == nil {
		t.Fatal("Parse accepted garbage")
	}
}
