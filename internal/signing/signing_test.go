package signing

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"regexp"
	"sync"
	"testing"
)

func TestSignaturesVerifyWithTheServedCertificate(t *testing.T) {
	t.Parallel()
	s := New()
	raw, err := s.CertPEM()
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(raw)
	if block == nil || block.Type != "CERTIFICATE" {
		t.Fatalf("not a PEM certificate: %q", raw)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	pub := cert.PublicKey.(*rsa.PublicKey)
	if pub.N.BitLen() != KeyBits {
		t.Fatalf("key has %d bits", pub.N.BitLen())
	}
	text := "Message\nhello\nMessageId\nid\nTimestamp\n2024-01-01T00:00:00.000Z\nTopicArn\narn\nType\nNotification\n"
	for _, tc := range []struct {
		version string
		hash    crypto.Hash
		digest  func([]byte) []byte
	}{
		{"1", crypto.SHA1, func(b []byte) []byte { s := sha1.Sum(b); return s[:] }},
		{"2", crypto.SHA256, func(b []byte) []byte { s := sha256.Sum256(b); return s[:] }},
	} {
		sig, err := s.Sign(tc.version, text)
		if err != nil {
			t.Fatal(err)
		}
		b, err := base64.StdEncoding.DecodeString(sig)
		if err != nil {
			t.Fatal(err)
		}
		if err := rsa.VerifyPKCS1v15(pub, tc.hash, tc.digest([]byte(text)), b); err != nil {
			t.Fatalf("version %s: %v", tc.version, err)
		}
		if err := rsa.VerifyPKCS1v15(pub, tc.hash, tc.digest([]byte(text+"x")), b); err == nil {
			t.Fatalf("version %s: a changed text verified", tc.version)
		}
	}
	if _, err := s.Sign("3", text); err == nil {
		t.Fatal("SignatureVersion 3 accepted")
	}
	name, err := s.CertFile()
	if err != nil || !regexp.MustCompile(`^SimpleNotificationService-[0-9a-f]{32}\.pem$`).MatchString(name) {
		t.Fatalf("CertFile = %q, %v", name, err)
	}
	t.Logf("key and certificate made in %v", s.KeyTime())
}

func TestKeyIsMadeOnceUnderConcurrentUse(t *testing.T) {
	t.Parallel()
	s := New()
	s.Warm()
	var wg sync.WaitGroup
	pems := make([][]byte, 8)
	for i := range pems {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pems[i], _ = s.CertPEM()
		}()
	}
	wg.Wait()
	for _, p := range pems[1:] {
		if string(p) != string(pems[0]) {
			t.Fatal("two certificates made")
		}
	}
}

func TestNewDoesNoWork(t *testing.T) {
	t.Parallel()
	if s := New(); s.key != nil {
		t.Fatal("key made by New")
	}
}

// BenchmarkKey measures making the key and certificate, which New defers.
func BenchmarkKey(b *testing.B) {
	for b.Loop() {
		if _, _, err := generate(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSign(b *testing.B) {
	s := New()
	if _, err := s.CertPEM(); err != nil {
		b.Fatal(err)
	}
	for _, v := range []string{"1", "2"} {
		b.Run("v"+v, func(b *testing.B) {
			for b.Loop() {
				if _, err := s.Sign(v, "Message\nhello\n"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
