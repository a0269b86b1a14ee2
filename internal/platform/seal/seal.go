// Package seal encrypts secrets that Outflow must be able to read back (TOTP secrets, signing keys, mailbox
// passwords, OAuth refresh tokens) with AES-256-GCM. Each sealed value names the key that sealed it, so the
// deployment key can rotate: new values use the newest key, old values stay readable with the old ones.
package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrUnknownKey is returned when a sealed value names a key the keyring does not hold.
var ErrUnknownKey = errors.New("seal: sealed with an unknown key")

// Keyring holds the sealing keys by id; the newest seals, every one opens.
type Keyring struct {
	current uint32
	aeads   map[uint32]cipher.AEAD
}

// NewKeyring derives one AES-256 key per deployment secret. secrets[0] is the current one; older secrets
// follow so values sealed with them still open. Key ids are derived from the secrets, not their order.
func NewKeyring(secrets ...[]byte) (*Keyring, error) {
	if len(secrets) == 0 {
		return nil, errors.New("seal: no secret")
	}
	k := &Keyring{aeads: map[uint32]cipher.AEAD{}}
	for i, s := range secrets {
		mac := hmac.New(sha256.New, s)
		mac.Write([]byte("outflow/seal/v1"))
		key := mac.Sum(nil)
		idMac := hmac.New(sha256.New, key)
		idMac.Write([]byte("key-id"))
		id := binary.BigEndian.Uint32(idMac.Sum(nil))
		block, err := aes.NewCipher(key)
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		k.aeads[id] = aead
		if i == 0 {
			k.current = id
		}
	}
	return k, nil
}

// Seal encrypts plaintext; context binds the value to its use (for example "totp:<user id>"), so a sealed
// value copied into another row does not open there.
func (k *Keyring) Seal(plaintext []byte, context string) []byte {
	aead := k.aeads[k.current]
	out := make([]byte, 4, 4+aead.NonceSize()+len(plaintext)+aead.Overhead())
	binary.BigEndian.PutUint32(out, k.current)
	nonce := make([]byte, aead.NonceSize())
	_, _ = rand.Read(nonce)
	out = append(out, nonce...)
	return aead.Seal(out, nonce, plaintext, []byte(context))
}

// Open decrypts a value from Seal with the same context.
func (k *Keyring) Open(sealed []byte, context string) ([]byte, error) {
	if len(sealed) < 4 {
		return nil, errors.New("seal: value too short")
	}
	aead, ok := k.aeads[binary.BigEndian.Uint32(sealed)]
	if !ok {
		return nil, ErrUnknownKey
	}
	rest := sealed[4:]
	if len(rest) < aead.NonceSize() {
		return nil, errors.New("seal: value too short")
	}
	plain, err := aead.Open(nil, rest[:aead.NonceSize()], rest[aead.NonceSize():], []byte(context))
	if err != nil {
		return nil, fmt.Errorf("seal: open: %w", err)
	}
	return plain, nil
}
