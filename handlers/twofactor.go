package handlers

import (
	"context"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/identity/accounts"
)

// TwoFactor implements TOTP two-factor authentication: status, enrolment, turning it off (session-only) and
// the public second step of a sign-in.
type TwoFactor struct {
	twoFactor *accounts.TwoFactor
}

// NewTwoFactor builds the 2FA handlers.
func NewTwoFactor(t *accounts.TwoFactor) *TwoFactor {
	return &TwoFactor{twoFactor: t}
}

// Auth2FAStatus tells whether the caller has 2FA on.
func (h *TwoFactor) Auth2FAStatus(ctx context.Context) (*api.TwoFAStatus, error) {
	p, err := sessionCaller(ctx)
	if err != nil {
		return nil, err
	}
	on, err := h.twoFactor.Enabled(ctx, p.UserID)
	if err != nil {
		return nil, err
	}
	return &api.TwoFAStatus{Enabled: on}, nil
}

// Auth2FAEnrollStart returns a new TOTP secret and its otpauth URI, shown only in this answer.
func (h *TwoFactor) Auth2FAEnrollStart(ctx context.Context, _ api.Auth2FAEnrollStartParams) (*api.TwoFAEnrollStart, error) {
	p, err := sessionCaller(ctx)
	if err != nil {
		return nil, err
	}
	e, err := h.twoFactor.EnrollStart(ctx, p.UserID)
	if err != nil {
		return nil, err
	}
	return &api.TwoFAEnrollStart{Secret: e.Secret, OtpauthURI: e.OTPAuthURI}, nil
}

// Auth2FAEnrollConfirm turns 2FA on with a first code and returns the recovery codes, shown only in this answer.
func (h *TwoFactor) Auth2FAEnrollConfirm(ctx context.Context, req *api.TwoFACodeRequest, _ api.Auth2FAEnrollConfirmParams) (*api.TwoFARecoveryCodes, error) {
	p, err := sessionCaller(ctx)
	if err != nil {
		return nil, err
	}
	codes, err := h.twoFactor.EnrollConfirm(ctx, p.UserID, req.Code)
	if err != nil {
		return nil, err
	}
	return &api.TwoFARecoveryCodes{RecoveryCodes: codes}, nil
}

// Auth2FADisable turns 2FA off with a TOTP code or an unused recovery code.
func (h *TwoFactor) Auth2FADisable(ctx context.Context, req *api.TwoFACodeRequest, _ api.Auth2FADisableParams) (*api.OkResponse, error) {
	p, err := sessionCaller(ctx)
	if err != nil {
		return nil, err
	}
	if err := h.twoFactor.Disable(ctx, p.UserID, req.Code); err != nil {
		return nil, err
	}
	return &api.OkResponse{Ok: true}, nil
}

// Auth2FAVerifyLogin redeems the pending token of a 2FA sign-in with a code and answers the session's tokens.
func (h *TwoFactor) Auth2FAVerifyLogin(ctx context.Context, req *api.TwoFAVerifyRequest) (*api.TokenPair, error) {
	pair, err := h.twoFactor.VerifyLogin(ctx, req.PendingToken, req.Code)
	if err != nil {
		return nil, err
	}
	return TokenPairOf(pair), nil
}
