package oauth

import (
	"github.com/google/uuid"

	"github.com/outflowhq/outflow/internal/platform/seal"
)

// WebhookApps hands webhook delivery, which sits below this package and may not import it, the app rules it
// applies before every attempt to an app's managed endpoint: the allowed_webhook_domains check and the app's
// signing secret. The composition root passes it to delivery.Options.Apps.
type WebhookApps struct {
	// Keyring opens the apps' sealed webhook secrets (the keyring that sealed them).
	Keyring *seal.Keyring
}

// CheckDeliveryURL is CheckDeliveryURL, for delivery.
func (WebhookApps) CheckDeliveryURL(raw string, domains []string) error {
	return CheckDeliveryURL(raw, domains)
}

// OpenWebhookSecret opens an app's stored webhook secret with the keyring, for delivery.
func (a WebhookApps) OpenWebhookSecret(appID uuid.UUID, sealed []byte) (string, error) {
	return OpenWebhookSecret(a.Keyring, appID, sealed)
}
