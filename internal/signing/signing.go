// Package signing holds the key SNS signs its messages with: an RSA key and
// a self-signed X.509 certificate made when first needed, the certificate in
// PEM for the SigningCertURL, and the two signature algorithms SNS uses.
//
// Generating a 2048-bit RSA key takes tens of milliseconds (more under the
// race detector), so New does no work: the key is made by the first call that
// needs it, or ahead of time by Warm.
//
// https://docs.aws.amazon.com/sns/latest/dg/sns-verify-signature-of-message.html
package signing

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"sync"
	"time"
)

// KeyBits is the size of the RSA key, as AWS's SNS certificates use.
const KeyBits = 2048

// Signer signs SNS messages. It is safe for concurrent use.
type Signer struct {
	once sync.Once
	key  *rsa.PrivateKey
	pem  []byte
	id   string
	err  error
	took time.Duration
}

// New returns a Signer whose key does not exist yet.
func New() *Signer { return &Signer{} }

// Warm makes the key in the background, so that the first signature does not
// wait for it.
func (s *Signer) Warm() { go s.load() }

func (s *Signer) load() error {
	s.once.Do(func() {
		start := time.Now()
		s.key, s.pem, s.err = generate()
		s.took = time.Since(start)
		if s.err == nil {
			// The file name AWS serves its certificate under carries a hex id
			// (SimpleNotificationService-<32 hex>.pem); ours is derived from
			// the certificate so each server's name is its own.
			sum := sha256.Sum256(s.pem)
			s.id = hex.EncodeToString(sum[:16])
		}
	})
	return s.err
}

// generate makes the key and a self-signed certificate for it.
func generate() (*rsa.PrivateKey, []byte, error) {
	key, err := rsa.GenerateKey(rand.Reader, KeyBits)
	if err != nil {
		return nil, nil, fmt.Errorf("signing: generate key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 64))
	if err != nil {
		return nil, nil, fmt.Errorf("signing: serial: %w", err)
	}
	// Validity is wall-clock time: verifiers compare it with their own clock,
	// not with fanout's (possibly manual) one.
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "sns.amazonaws.com", Organization: []string{"fanout"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("signing: certificate: %w", err)
	}
	return key, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}

// CertPEM returns the certificate in PEM, as served at the SigningCertURL.
func (s *Signer) CertPEM() ([]byte, error) {
	if err := s.load(); err != nil {
		return nil, err
	}
	return s.pem, nil
}

// CertFile returns the file name the certificate is served under, in AWS's
// shape: SimpleNotificationService-<hex>.pem.
func (s *Signer) CertFile() (string, error) {
	if err := s.load(); err != nil {
		return "", err
	}
	return "SimpleNotificationService-" + s.id + ".pem", nil
}

// KeyTime reports how long making the key and certificate took, making them
// first if need be (zero if that failed).
func (s *Signer) KeyTime() time.Duration {
	if s.load() != nil {
		return 0
	}
	return s.took
}

// Sign signs text for SignatureVersion version ("1": SHA1withRSA, "2":
// SHA256withRSA, both PKCS #1 v1.5) and returns the base64 signature.
func (s *Signer) Sign(version, text string) (string, error) {
	if err := s.load(); err != nil {
		return "", err
	}
	var h crypto.Hash
	var digest []byte
	switch version {
	case "1":
		sum := sha1.Sum([]byte(text))
		h, digest = crypto.SHA1, sum[:]
	case "2":
		sum := sha256.Sum256([]byte(text))
		h, digest = crypto.SHA256, sum[:]
	default:
		return "", fmt.Errorf("signing: unknown SignatureVersion %q", version)
	}
	sig, err := rsa.SignPKCS1v15(rand.Reader, s.key, h, digest)
	if err != nil {
		return "", fmt.Errorf("signing: sign: %w", err)
	}
	return base64.StdEncoding.EncodeToString(sig), nil
}
