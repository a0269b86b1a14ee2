package app

import (
	"net/http"

	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/idempotency"
)

// principalCredential tells the idempotency layer (which sits below identity and cannot read principals) who
// sent a request: the credential the gate in front of it authenticated.
func principalCredential(r *http.Request) (idempotency.Credential, bool) {
	p := auth.PrincipalFrom(r.Context())
	if p == nil {
		return idempotency.Credential{}, false
	}
	return idempotency.Credential{Organization: p.OrganizationID, ID: p.CredentialID}, true
}
