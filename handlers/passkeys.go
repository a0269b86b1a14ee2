package handlers

import (
	"context"
	"encoding/base64"

	"github.com/go-webauthn/webauthn/protocol"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/identity/accounts"
)

// Passkeys implements WebAuthn: registering and managing the caller's passkeys (session-only) and the public
// usernameless sign-in.
type Passkeys struct {
	passkeys *accounts.Passkeys
}

// NewPasskeys builds the passkey handlers.
func NewPasskeys(p *accounts.Passkeys) *Passkeys {
	return &Passkeys{passkeys: p}
}

// AuthPasskeyRegisterBegin returns the creation options for the browser and the ceremony's handle.
func (h *Passkeys) AuthPasskeyRegisterBegin(ctx context.Context, _ api.AuthPasskeyRegisterBeginParams) (*api.PasskeyRegistrationChallenge, error) {
	p, err := sessionCaller(ctx)
	if err != nil {
		return nil, err
	}
	c, err := h.passkeys.RegisterBegin(ctx, p.UserID)
	if err != nil {
		return nil, err
	}
	var options api.PasskeyRegistrationChallengePublicKey
	if err := options.UnmarshalJSON(c.Options); err != nil {
		return nil, err
	}
	return &api.PasskeyRegistrationChallenge{PublicKey: options, Session: c.Session}, nil
}

// AuthPasskeyRegisterFinish verifies the browser's attestation and stores the passkey.
func (h *Passkeys) AuthPasskeyRegisterFinish(ctx context.Context, req *api.PasskeyRegisterFinishRequest, _ api.AuthPasskeyRegisterFinishParams) (*api.PasskeyCredential, error) {
	p, err := sessionCaller(ctx)
	if err != nil {
		return nil, err
	}
	credential, err := req.Credential.MarshalJSON()
	if err != nil {
		return nil, err
	}
	row, err := h.passkeys.RegisterFinish(ctx, p.UserID, req.Session.Or(""), credential, req.Name.Or(""))
	if err != nil {
		return nil, err
	}
	return passkeyOf(row), nil
}

// AuthPasskeyLoginBegin returns the assertion options of a usernameless sign-in and the ceremony's handle.
func (h *Passkeys) AuthPasskeyLoginBegin(ctx context.Context) (*api.PasskeyLoginChallenge, error) {
	c, err := h.passkeys.LoginBegin(ctx)
	if err != nil {
		return nil, err
	}
	var options api.PasskeyLoginChallengePublicKey
	if err := options.UnmarshalJSON(c.Options); err != nil {
		return nil, err
	}
	return &api.PasskeyLoginChallenge{Session: api.NewOptString(c.Session), PublicKey: api.NewOptPasskeyLoginChallengePublicKey(options)}, nil
}

// AuthPasskeyLoginFinish verifies the browser's assertion and answers the new session's tokens.
func (h *Passkeys) AuthPasskeyLoginFinish(ctx context.Context, req *api.PasskeyLoginFinishRequest) (*api.TokenPair, error) {
	assertion, err := req.Credential.MarshalJSON()
	if err != nil {
		return nil, err
	}
	pair, err := h.passkeys.LoginFinish(ctx, req.Session, assertion)
	if err != nil {
		return nil, err
	}
	return TokenPairOf(pair), nil
}

// AuthListPasskeyCredentials lists the caller's passkeys.
func (h *Passkeys) AuthListPasskeyCredentials(ctx context.Context) (api.PasskeyCredentialList, error) {
	p, err := sessionCaller(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := h.passkeys.List(ctx, p.UserID)
	if err != nil {
		return nil, err
	}
	out := make(api.PasskeyCredentialList, 0, len(rows))
	for _, r := range rows {
		out = append(out, *passkeyOf(r))
	}
	return out, nil
}

// AuthRenamePasskeyCredential renames one of the caller's passkeys.
func (h *Passkeys) AuthRenamePasskeyCredential(ctx context.Context, req *api.PasskeyRenameRequest, params api.AuthRenamePasskeyCredentialParams) (*api.PasskeyCredential, error) {
	p, err := sessionCaller(ctx)
	if err != nil {
		return nil, err
	}
	row, err := h.passkeys.Rename(ctx, p.UserID, params.ID, req.Name)
	if err != nil {
		return nil, err
	}
	return passkeyOf(row), nil
}

// AuthDeletePasskeyCredential removes one of the caller's passkeys.
func (h *Passkeys) AuthDeletePasskeyCredential(ctx context.Context, params api.AuthDeletePasskeyCredentialParams) error {
	p, err := sessionCaller(ctx)
	if err != nil {
		return err
	}
	return h.passkeys.Delete(ctx, p.UserID, params.ID)
}

// passkeyOf maps a stored passkey to the API type; the credential id is base64url, as WebAuthn clients show it.
func passkeyOf(r dbq.PasskeyCredential) *api.PasskeyCredential {
	out := &api.PasskeyCredential{ID: r.ID, Name: r.Name, Provider: optString(r.Provider),
		CredentialID: base64.RawURLEncoding.EncodeToString(r.CredentialID), Transports: r.Transports,
		BackupState: protocol.AuthenticatorFlags(r.Flags).HasBackupState(), CreatedAt: r.CreatedAt,
		LastUsedAt: api.OptNilDateTime{Set: true, Null: true}}
	if r.LastUsedAt != nil {
		out.LastUsedAt = api.NewOptNilDateTime(*r.LastUsedAt)
	}
	return out
}
