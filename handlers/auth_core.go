package handlers

import (
	"context"

	"github.com/google/uuid"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/identity/accounts"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// AuthCore implements sign-up, sign-in, refresh, password recovery and the session list.
type AuthCore struct {
	flows    *accounts.Flows
	sessions *accounts.Sessions
}

// NewAuthCore builds the core sign-in handlers.
func NewAuthCore(flows *accounts.Flows, sessions *accounts.Sessions) *AuthCore {
	return &AuthCore{flows: flows, sessions: sessions}
}

// captchaOf reads the anti-bot token under its name or its legacy alias.
func captchaOf(c, alias api.OptString) string {
	if c.Set && c.Value != "" {
		return c.Value
	}
	return alias.Or("")
}

// TokenPairOf maps a session's tokens to the API type.
func TokenPairOf(p accounts.TokenPair) *api.TokenPair {
	return &api.TokenPair{AccessToken: p.AccessToken, AccessTokenExpiresAt: p.AccessExpiresAt,
		RefreshToken: p.RefreshToken, RefreshTokenExpiresAt: p.RefreshExpiresAt}
}

// LoginResultOf maps a completed first factor to the API's token-pair-or-2FA-challenge shape.
func LoginResultOf(s accounts.SignIn) *api.LoginResult {
	if s.Tokens == nil {
		return &api.LoginResult{TwoFaRequired: api.NewOptBool(true), PendingToken: api.NewOptString(s.PendingToken),
			ExpiresIn: api.NewOptInt(int(accounts.TwoFAPendingTTL.Seconds()))}
	}
	return &api.LoginResult{
		AccessToken: api.NewOptString(s.Tokens.AccessToken), AccessTokenExpiresAt: api.NewOptDateTime(s.Tokens.AccessExpiresAt),
		RefreshToken: api.NewOptString(s.Tokens.RefreshToken), RefreshTokenExpiresAt: api.NewOptDateTime(s.Tokens.RefreshExpiresAt),
	}
}

// AuthLoginStart checks the password and emails the sign-in code.
func (h *AuthCore) AuthLoginStart(ctx context.Context, req *api.AuthCredentials) (*api.AuthSession, error) {
	//lint:ignore SA1019 the reference name `turnstile` stays accepted as an alias of `captcha`
	handle, err := h.flows.LoginStart(ctx, req.Email, req.Password, captchaOf(req.Captcha, req.Turnstile))
	if err != nil {
		return nil, err
	}
	return &api.AuthSession{Session: handle}, nil
}

// AuthLoginConfirm redeems the code: tokens, or the 2FA challenge.
func (h *AuthCore) AuthLoginConfirm(ctx context.Context, req *api.ConfirmRequest) (*api.LoginResult, error) {
	s, err := h.flows.LoginConfirm(ctx, req.Session, req.Code)
	if err != nil {
		return nil, err
	}
	return LoginResultOf(s), nil
}

// AuthRegisterStart starts (or, without email verification, completes) a registration.
func (h *AuthCore) AuthRegisterStart(ctx context.Context, req *api.AuthCredentials) (*api.AuthRegisterResult, error) {
	//lint:ignore SA1019 the reference name `turnstile` stays accepted as an alias of `captcha`
	handle, signIn, err := h.flows.RegisterStart(ctx, req.Email, req.Password, captchaOf(req.Captcha, req.Turnstile))
	if err != nil {
		return nil, err
	}
	if signIn == nil {
		return &api.AuthRegisterResult{Session: api.NewOptString(handle)}, nil
	}
	r := LoginResultOf(*signIn)
	return &api.AuthRegisterResult{AccessToken: r.AccessToken, AccessTokenExpiresAt: r.AccessTokenExpiresAt,
		RefreshToken: r.RefreshToken, RefreshTokenExpiresAt: r.RefreshTokenExpiresAt, TwoFaRequired: r.TwoFaRequired,
		PendingToken: r.PendingToken, ExpiresIn: r.ExpiresIn}, nil
}

// AuthRegisterConfirm creates the account from the emailed code.
func (h *AuthCore) AuthRegisterConfirm(ctx context.Context, req *api.ConfirmRequest) error {
	return h.flows.RegisterConfirm(ctx, req.Session, req.Code)
}

// AuthResetPasswordStart emails a reset link; the answer never tells whether the account exists.
func (h *AuthCore) AuthResetPasswordStart(ctx context.Context, req *api.ResetPasswordStartRequest) error {
	//lint:ignore SA1019 the reference name `turnstile` stays accepted as an alias of `captcha`
	return h.flows.ResetStart(ctx, req.Email, captchaOf(req.Captcha, req.Turnstile))
}

// AuthResetPasswordConfirm sets the new password.
func (h *AuthCore) AuthResetPasswordConfirm(ctx context.Context, req *api.ResetPasswordConfirmRequest) error {
	//lint:ignore SA1019 the reference name `turnstile` stays accepted as an alias of `captcha`
	return h.flows.ResetConfirm(ctx, req.Session, req.Password, captchaOf(req.Captcha, req.Turnstile))
}

// AuthRefresh rotates the refresh token.
func (h *AuthCore) AuthRefresh(ctx context.Context, req *api.RefreshRequest) (*api.TokenPair, error) {
	pair, err := h.flows.Refresh(ctx, req.RefreshToken)
	if err != nil {
		return nil, err
	}
	return TokenPairOf(pair), nil
}

// AuthChangePassword replaces the caller's password.
func (h *AuthCore) AuthChangePassword(ctx context.Context, req *api.ChangePasswordRequest, _ api.AuthChangePasswordParams) error {
	p, err := sessionCaller(ctx)
	if err != nil {
		return err
	}
	return h.flows.ChangePassword(ctx, p, req.CurrentPassword, req.NewPassword)
}

// AuthLogout ends the caller's session.
func (h *AuthCore) AuthLogout(ctx context.Context, _ api.AuthLogoutParams) error {
	p, err := sessionCaller(ctx)
	if err != nil {
		return err
	}
	_, err = h.sessions.Revoke(ctx, p.UserID, p.CredentialID, "logout")
	return err
}

// AuthLogoutAll ends every session of the caller.
func (h *AuthCore) AuthLogoutAll(ctx context.Context, _ api.AuthLogoutAllParams) error {
	p, err := sessionCaller(ctx)
	if err != nil {
		return err
	}
	return h.sessions.RevokeAll(ctx, h.flows.Pool, p.UserID, uuid.Nil, "logout all")
}

// AuthRevokeOtherSessions ends every session of the caller but the current one.
func (h *AuthCore) AuthRevokeOtherSessions(ctx context.Context, _ api.AuthRevokeOtherSessionsParams) error {
	p, err := sessionCaller(ctx)
	if err != nil {
		return err
	}
	return h.sessions.RevokeAll(ctx, h.flows.Pool, p.UserID, p.CredentialID, "ended from another session")
}

// AuthRevokeSession ends one of the caller's own sessions; anyone else's is a 404.
func (h *AuthCore) AuthRevokeSession(ctx context.Context, params api.AuthRevokeSessionParams) error {
	p, err := sessionCaller(ctx)
	if err != nil {
		return err
	}
	ok, err := h.sessions.Revoke(ctx, p.UserID, params.ID, "ended from another session")
	if err != nil {
		return err
	}
	if !ok {
		return apierror.NotFound("not_found", "Session not found.")
	}
	return nil
}

// AuthListSessions lists the caller's live sessions, the current one first.
func (h *AuthCore) AuthListSessions(ctx context.Context) (api.SessionList, error) {
	p, err := sessionCaller(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := dbq.New().SessionListActiveByUser(ctx, h.flows.Pool, p.UserID)
	if err != nil {
		return nil, err
	}
	out := make(api.SessionList, 0, len(rows))
	for _, r := range rows {
		v := api.Session{ID: r.ID, Current: r.ID == p.CredentialID, AuthProvider: r.AuthProvider,
			Browser: optString(r.Browser), Os: optString(r.Os), LocationCity: optString(r.LocationCity),
			LocationRegion: optString(r.LocationRegion), LocationCountry: optString(r.LocationCountry),
			CountryCode: optString(r.CountryCode), CreatedAt: r.CreatedAt, LastActiveAt: r.LastActiveAt}
		if v.Current {
			out = append(api.SessionList{v}, out...)
		} else {
			out = append(out, v)
		}
	}
	return out, nil
}

// optString maps an empty string to an absent field.
func optString(s string) api.OptString {
	if s == "" {
		return api.OptString{}
	}
	return api.NewOptString(s)
}
