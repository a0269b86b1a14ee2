package delivery

import (
	"fmt"

	"github.com/google/uuid"

	"github.com/outflowhq/outflow/internal/platform/seal"
)

// endpointSecretContext binds a sealed endpoint secret to its endpoint, so a sealed value cannot be moved to
// another endpoint. It names no generation: a rotation moves the current sealed value to
// previous_secret_sealed as it is.
func endpointSecretContext(org, endpoint uuid.UUID) string {
	return "webhook_endpoint_secret:" + org.String() + ":" + endpoint.String()
}

// SealSecret encrypts an endpoint's whsec_ signing secret for webhook_endpoints.secret_sealed (and, after a
// rotation, previous_secret_sealed).
func SealSecret(k *seal.Keyring, org, endpoint uuid.UUID, secret string) []byte {
	return k.Seal([]byte(secret), endpointSecretContext(org, endpoint))
}

// OpenSecret decrypts a value of SealSecret.
func OpenSecret(k *seal.Keyring, org, endpoint uuid.UUID, sealed []byte) (string, error) {
	b, err := k.Open(sealed, endpointSecretContext(org, endpoint))
	if err != nil {
		return "", fmt.Errorf("open webhook endpoint secret: %w", err)
	}
	return string(b), nil
}
