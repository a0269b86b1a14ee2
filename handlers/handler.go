package handlers

import (
	"context"
	"errors"
	"log/slog"

	"github.com/ogen-go/ogen/ogenerrors"

	"github.com/outflowhq/outflow/apierror"
	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/reqctx"
)

// Handler is the whole API: the operation groups embedded, plus the error mapping ogen calls.
type Handler struct {
	*System
	*AuthCore
	*Profile
	*Notifications
	*Social
	*TwoFactor
	*Passkeys
	*Organizations
	notYet

	logger *slog.Logger
}

// notYet answers every operation whose area has not shipped with ogen's ErrNotImplemented, which the server
// turns into a 501 naming the operation. It sits one level deeper than the area structs, so a method an area
// implements always wins over it.
type notYet struct {
	api.UnimplementedHandler
}

var _ api.Handler = (*Handler)(nil)

// Deps is everything the operation groups need, built once by server.New.
type Deps struct {
	Logger        *slog.Logger
	System        *System
	AuthCore      *AuthCore
	Profile       *Profile
	Notifications *Notifications
	Social        *Social
	TwoFactor     *TwoFactor
	Passkeys      *Passkeys
	Organizations *Organizations
}

// New assembles the API handler.
func New(d Deps) *Handler {
	return &Handler{System: d.System, AuthCore: d.AuthCore, Profile: d.Profile, Notifications: d.Notifications, Social: d.Social, TwoFactor: d.TwoFactor, Passkeys: d.Passkeys, Organizations: d.Organizations, logger: d.Logger}
}

// NewError turns a handler or security error into the envelope: *apierror.Error keeps its status and code,
// a failed security check is a 401 unless the authenticator said otherwise, anything else is a logged 500.
func (h *Handler) NewError(ctx context.Context, err error) *api.ErrorStatusCode {
	var secErr *ogenerrors.SecurityError
	if errors.As(err, &secErr) {
		var e *apierror.Error
		if !errors.As(secErr.Err, &e) {
			// ogen's own "no credential sent" and friends.
			if errors.Is(secErr.Err, ogenerrors.ErrSecurityRequirementIsNotSatisfied) {
				e = apierror.Unauthorized("missing_credential", "Send a credential as `Authorization: Bearer <token>`.")
			} else {
				e = apierror.From(secErr.Err)
			}
		}
		err = e
	}
	e := apierror.From(err)
	apierror.Log(ctx, h.logger, e)
	apierror.NoteRetryAfter(ctx, e)
	env := apierror.EnvelopeFor(ctx, e)
	out := &api.ErrorStatusCode{StatusCode: e.Status, Response: api.Error{
		Error: env.Error, Message: env.Message, Code: env.Code, RequestID: reqctx.ID(ctx),
	}}
	if e.Fix != "" {
		out.Response.Fix = api.NewOptString(e.Fix)
	}
	return out
}
