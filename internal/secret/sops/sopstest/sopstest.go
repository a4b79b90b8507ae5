package sopstest

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	"filippo.io/age"
	"github.com/ProtonMail/go-crypto/openpgp"
	pgparmor "github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
)

// PGPKey is an armored PGP key pair and its fingerprint (upper-case hex,
// as SOPS writes it).
type PGPKey struct {
	Fingerprint, Private, Public string
}

// NewPGPKey generates an RSA 2048 PGP key pair for name.
func NewPGPKey(t testing.TB, name string) PGPKey {
	t.Helper()
	e, err := openpgp.NewEntity(name, "test", name+"@example.invalid", &packet.Config{RSABits: 2048, Algorithm: packet.PubKeyAlgoRSA})
	if err != nil {
		t.Fatal(err)
	}
	var priv, pub bytes.Buffer
	w, err := pgparmor.Encode(&priv, openpgp.PrivateKeyType, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.SerializePrivate(w, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if w, err = pgparmor.Encode(&pub, openpgp.PublicKeyType, nil); err != nil {
		t.Fatal(err)
	}
	if err := e.Serialize(w); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return PGPKey{Fingerprint: strings.ToUpper(hex.EncodeToString(e.PrimaryKey.Fingerprint)), Private: priv.String(), Public: pub.String()}
}

// AgeKey is an age X25519 identity and its recipient.
type AgeKey struct {
	Identity, Recipient string
}

// NewAgeKey generates an age identity.
func NewAgeKey(t testing.TB) AgeKey {
	t.Helper()
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	return AgeKey{Identity: id.String(), Recipient: id.Recipient().String()}
}
