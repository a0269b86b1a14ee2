package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"strings"
)

// APIKeyPrefix starts every API key secret, so the authenticator (and secret scanners) recognise one.
const APIKeyPrefix = "ofk_"

// NewAPIKey is a freshly minted API key: the secret is shown to its owner once; only Hash, Prefix and Suffix
// are stored.
type NewAPIKey struct {
	Secret string
	Hash   []byte
	Prefix string
	Suffix string
}

// MintAPIKey generates a key with 256 bits of randomness.
func MintAPIKey() NewAPIKey {
	var raw [32]byte
	_, _ = rand.Read(raw[:]) // crypto/rand.Read never fails on supported platforms.
	secret := APIKeyPrefix + base64.RawURLEncoding.EncodeToString(raw[:])
	return NewAPIKey{
		Secret: secret,
		Hash:   HashAPIKey(secret),
		Prefix: secret[:len(APIKeyPrefix)+8],
		Suffix: secret[len(secret)-4:],
	}
}

// HashAPIKey is the stored form of a secret, and the lookup key when one is presented.
func HashAPIKey(secret string) []byte {
	sum := sha256.Sum256([]byte(secret))
	return sum[:]
}

// IsAPIKey reports whether a bearer token has the API key form.
func IsAPIKey(token string) bool {
	return strings.HasPrefix(token, APIKeyPrefix) && len(token) == len(APIKeyPrefix)+43
}
