package oauth

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"

	"github.com/google/uuid"
	"golang.org/x/crypto/bcrypt"

	"github.com/outflowhq/outflow/internal/platform/seal"
)

// Prefixes of the identifiers and secrets this server issues, so people and secret scanners recognise them.
const (
	ClientIDPrefix      = "ofc_"
	ClientSecretPrefix  = "ofcs_"
	WebhookSecretPrefix = "whsec_"
)

func random(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms.
	return base64.RawURLEncoding.EncodeToString(b)
}

// NewClientID mints a public client identifier.
func NewClientID() string { return ClientIDPrefix + random(16) }

// NewClientSecret mints a client secret (shown once) and its bcrypt hash, which is all that is stored and what
// fosite's default secret hasher compares with. The secret carries 256 bits, so bcrypt's default cost is ample.
func NewClientSecret() (secret string, hash []byte, err error) {
	secret = ClientSecretPrefix + random(32)
	hash, err = bcrypt.GenerateFromPassword([]byte(secret), bcrypt.DefaultCost)
	if err != nil {
		return "", nil, fmt.Errorf("hash client secret: %w", err)
	}
	return secret, hash, nil
}

// NewWebhookSecret mints an app webhook signing secret.
func NewWebhookSecret() string { return WebhookSecretPrefix + random(32) }

// webhookSecretContext binds a sealed webhook secret to its app, so a sealed value cannot be moved to another.
func webhookSecretContext(appID uuid.UUID) string {
	return "oauth_app_webhook_secret:" + appID.String()
}

// SealWebhookSecret encrypts an app's webhook secret for storage.
func SealWebhookSecret(k *seal.Keyring, appID uuid.UUID, secret string) []byte {
	return k.Seal([]byte(secret), webhookSecretContext(appID))
}

// OpenWebhookSecret decrypts an app's stored webhook secret.
func OpenWebhookSecret(k *seal.Keyring, appID uuid.UUID, sealed []byte) (string, error) {
	b, err := k.Open(sealed, webhookSecretContext(appID))
	if err != nil {
		return "", fmt.Errorf("open webhook secret: %w", err)
	}
	return string(b), nil
}
