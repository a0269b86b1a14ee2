package handlers

import (
	"context"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/agents/tools"
	"github.com/outflowhq/outflow/internal/identity/auth"
)

// Security resolves the bearer credential of every non-public operation.
type Security struct {
	authn *auth.Authenticator
}

var _ api.SecurityHandler = (*Security)(nil)

// NewSecurity builds the security handler over the authenticator.
func NewSecurity(authn *auth.Authenticator) *Security {
	return &Security{authn: authn}
}

// HandleBearerAuth returns ctx carrying the principal. The request's token was usually authenticated once
// already by the HTTP middleware (idempotency needs the caller too); that outcome is reused here. The
// credential itself is kept too, so an agent tool called by this request calls its operation as this caller.
func (s *Security) HandleBearerAuth(ctx context.Context, _ api.OperationName, t api.BearerAuth) (context.Context, error) {
	ctx = tools.WithAuthorization(ctx, "Bearer "+t.Token)
	if _, err, ok := auth.OutcomeFrom(ctx); ok {
		return ctx, err
	}
	p, err := s.authn.Authenticate(ctx, t.Token)
	if err != nil {
		return ctx, err
	}
	return auth.WithPrincipal(ctx, p), nil
}
