package accounts

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/reqctx"
	"github.com/outflowhq/outflow/internal/platform/seal"
)

// PasskeyCeremonyTTL is how long a registration or sign-in ceremony may take between begin and finish; it is
// also the timeout the browser is given.
const PasskeyCeremonyTTL = 5 * time.Minute

// PasskeyProvider names how a passkey sign-in proved the user: the session's auth_provider.
const PasskeyProvider = "passkey"

// limitPasskeyRegistration bounds the registration ceremonies (begin and finish) of one account: each stores a
// challenge or verifies a signature.
var limitPasskeyRegistration = auth.Limit{Max: 30, Window: 10 * time.Minute}

var (
	errNoCeremony = apierror.BadRequest("no_pending_ceremony",
		"No passkey registration is pending (it expired or was already finished). Start again with POST /auth/passkey/register/begin.")
	errPasskeyNotVerified = apierror.Unauthorized("passkey_not_verified",
		"The passkey could not be verified, or the sign-in session expired or was already used. Start again.")
	errPasskeyCloned = apierror.Unauthorized("passkey_cloned",
		"This passkey's signature counter went backwards, a sign the key was copied; it can no longer sign in. Remove it and register a new one.")
	errPasskeyNotFound = apierror.NotFound("not_found", "Passkey not found.")
)

// Passkeys runs WebAuthn: registering a passkey for a signed-in user and the usernameless sign-in with one.
// The relying party id is the host of the web app's URL, because the browser runs the ceremony on the app's
// page and only lets a page use its own host (or a parent domain) as relying party id. The app URL defaults to
// the public URL, so a single-host deployment uses the public URL's host. Origins accepted: the app's and the
// API's.
type Passkeys struct {
	flows   *Flows
	keyring *seal.Keyring
	rpID    string
	// wa is nil when the app URL's host cannot be a relying party id (an IP address): passkeys are then
	// unavailable and unavailable says why.
	wa          *webauthn.WebAuthn
	unavailable error
}

// NewPasskeys configures the relying party from the deployment's app URL (its host is the RP id) and public URL
// (a second accepted origin).
func NewPasskeys(flows *Flows, keyring *seal.Keyring, publicURL, appURL string) *Passkeys {
	p := &Passkeys{flows: flows, keyring: keyring}
	app, err := url.Parse(appURL)
	if err != nil {
		p.unavailable = err
		return p
	}
	p.rpID = app.Hostname()
	origins := []string{app.Scheme + "://" + app.Host}
	if pub, err := url.Parse(publicURL); err == nil && pub.Host != "" && pub.Scheme+"://"+pub.Host != origins[0] {
		origins = append(origins, pub.Scheme+"://"+pub.Host)
	}
	required := true
	p.wa, p.unavailable = webauthn.New(&webauthn.Config{
		RPID: p.rpID, RPDisplayName: "Outflow", RPOrigins: origins,
		AttestationPreference: protocol.PreferNoAttestation,
		// A passkey sign-in stands in for the password, the emailed code and the second factor, so the
		// authenticator must verify the user, and the credential must be discoverable for usernameless sign-in.
		AuthenticatorSelection: protocol.AuthenticatorSelection{
			ResidentKey: protocol.ResidentKeyRequirementRequired, RequireResidentKey: &required,
			UserVerification: protocol.VerificationRequired,
		},
		Timeouts: webauthn.TimeoutsConfig{
			Login:        webauthn.TimeoutConfig{Timeout: PasskeyCeremonyTTL, TimeoutUVD: PasskeyCeremonyTTL},
			Registration: webauthn.TimeoutConfig{Timeout: PasskeyCeremonyTTL, TimeoutUVD: PasskeyCeremonyTTL},
		},
	})
	if p.unavailable != nil {
		p.wa = nil
	}
	return p
}

// Enabled tells whether this deployment can run passkey ceremonies (its app URL has a host name, not an IP
// address); the sign-in configuration reports it.
func (p *Passkeys) Enabled() bool { return p.wa != nil }

func (p *Passkeys) available() error {
	if p.wa == nil {
		return apierror.Unavailable("passkeys_unavailable",
			"Passkeys are not available on this deployment: its app URL is an IP address, and WebAuthn needs a host name.").
			WithFix("Set OUTFLOW_APP_URL (or OUTFLOW_PUBLIC_URL) to a URL with a host name; http://localhost:8080 works locally.").
			WithCause(p.unavailable)
	}
	return nil
}

// Ceremony is the first half of a WebAuthn ceremony: the options for the browser and the opaque handle of the
// server-side state to send back with the result.
type Ceremony struct {
	Options json.RawMessage
	Session string
}

// RegisterBegin starts registering a passkey for the user: creation options that exclude the user's existing
// passkeys, with the ceremony state kept in a passkey_register challenge.
func (p *Passkeys) RegisterBegin(ctx context.Context, userID uuid.UUID) (Ceremony, error) {
	if err := p.available(); err != nil {
		return Ceremony{}, err
	}
	if err := p.flows.Limiter.Allow(ctx, "passkey-register:account:"+userID.String(), limitPasskeyRegistration); err != nil {
		return Ceremony{}, err
	}
	var out Ceremony
	err := db.WithTx(ctx, p.flows.Pool, func(ctx context.Context, tx pgx.Tx) error {
		user, err := p.user(ctx, tx, userID, false)
		if err != nil {
			return err
		}
		exclude := make([]protocol.CredentialDescriptor, 0, len(user.credentials))
		for _, c := range user.credentials {
			exclude = append(exclude, c.Descriptor())
		}
		creation, session, err := p.wa.BeginRegistration(user, webauthn.WithExclusions(exclude))
		if err != nil {
			return err
		}
		if out.Options, err = json.Marshal(creation.Response); err != nil {
			return err
		}
		out.Session, _, err = p.flows.Challenges.Create(ctx, tx, NewChallenge{Kind: ChallengePasskeyRegister,
			UserID: userID, Payload: session, TTL: PasskeyCeremonyTTL})
		return err
	})
	if err != nil {
		return Ceremony{}, err
	}
	return out, nil
}

// RegisterFinish verifies the attestation the browser produced for the user's pending ceremony (the one named
// by handle, or the newest when handle is empty) and stores the passkey. name may be empty: the passkey is then
// named after its authenticator. The ceremony is spent even when verification fails.
func (p *Passkeys) RegisterFinish(ctx context.Context, userID uuid.UUID, handle string, credential []byte, name string) (dbq.PasskeyCredential, error) {
	if err := p.available(); err != nil {
		return dbq.PasskeyCredential{}, err
	}
	if err := p.flows.Limiter.Allow(ctx, "passkey-register:account:"+userID.String(), limitPasskeyRegistration); err != nil {
		return dbq.PasskeyCredential{}, err
	}
	name = strings.TrimSpace(name)
	if len([]rune(name)) > 255 {
		return dbq.PasskeyCredential{}, apierror.BadRequest("invalid_name", "A passkey name is 1 to 255 characters.")
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes(credential)
	if err != nil {
		return dbq.PasskeyCredential{}, webauthnError(apierror.BadRequest, "invalid_attestation", err)
	}
	var (
		row     dbq.PasskeyCredential
		refused error
	)
	err = db.WithTx(ctx, p.flows.Pool, func(ctx context.Context, tx pgx.Tx) error {
		q := dbq.New()
		var payload json.RawMessage
		if handle != "" {
			r, err := p.flows.Challenges.Redeem(ctx, p.flows.Pool, tx, handle, ChallengePasskeyRegister, "")
			if errors.Is(err, ErrChallengeInvalid) || (err == nil && r.UserID != userID) {
				return errNoCeremony
			}
			if err != nil {
				return err
			}
			payload = r.Payload
		} else {
			c, err := q.PasskeyCeremonyLatest(ctx, tx, userID)
			if errors.Is(err, pgx.ErrNoRows) {
				return errNoCeremony
			}
			if err != nil {
				return err
			}
			n, err := q.ChallengeConsume(ctx, tx, dbq.ChallengeConsumeParams{ID: c.ID, MaxAttempts: MaxCodeAttempts})
			if err != nil {
				return err
			}
			if n == 0 {
				return errNoCeremony // finished by a concurrent request
			}
			payload = c.Payload
		}
		var session webauthn.SessionData
		if err := json.Unmarshal(payload, &session); err != nil {
			return err
		}
		user, err := p.user(ctx, tx, userID, false)
		if err != nil {
			return err
		}
		cred, err := p.wa.CreateCredential(user, session, parsed)
		if err != nil {
			refused = webauthnError(apierror.BadRequest, "invalid_attestation", err)
			return nil // commit: the ceremony is spent
		}
		row, err = p.store(ctx, tx, userID, cred, name)
		return err
	})
	if err == nil {
		err = refused
	}
	if err != nil {
		return dbq.PasskeyCredential{}, err
	}
	return row, nil
}

// store saves a verified credential; the public key is sealed to the row.
func (p *Passkeys) store(ctx context.Context, tx pgx.Tx, userID uuid.UUID, cred *webauthn.Credential, name string) (dbq.PasskeyCredential, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return dbq.PasskeyCredential{}, err
	}
	aaguid, _ := uuid.FromBytes(cred.Authenticator.AAGUID)
	provider := passkeyProviders[aaguid]
	if name == "" {
		name = defaultPasskeyName(provider, cred)
	}
	attestation, err := json.Marshal(cred.Attestation)
	if err != nil {
		return dbq.PasskeyCredential{}, err
	}
	transports := make([]string, 0, len(cred.Transport))
	for _, t := range cred.Transport {
		transports = append(transports, string(t))
	}
	row, err := dbq.New().PasskeyCreate(ctx, tx, dbq.PasskeyCreateParams{
		ID: id, UserID: userID, RpID: p.rpID, CredentialID: cred.ID, Name: name, Provider: provider,
		Aaguid:          uuid.NullUUID{UUID: aaguid, Valid: aaguid != uuid.Nil},
		PublicKeySealed: p.keyring.Seal(cred.PublicKey, passkeyContext(id)),
		AttestationType: cred.AttestationType, AttestationFormat: cred.AttestationFormat, Transports: transports,
		Attachment: string(cred.Authenticator.Attachment), SignCount: int64(cred.Authenticator.SignCount),
		Flags: int16(cred.Flags.ProtocolValue()), Attestation: attestation,
	})
	if err != nil {
		return dbq.PasskeyCredential{}, db.Classify(err, "Passkey")
	}
	return row, nil
}

// LoginBegin starts a usernameless sign-in: assertion options without a credential list (the authenticator
// offers its discoverable passkeys), with the ceremony state kept in a passkey_login challenge.
func (p *Passkeys) LoginBegin(ctx context.Context) (Ceremony, error) {
	if err := p.available(); err != nil {
		return Ceremony{}, err
	}
	if err := p.flows.Limiter.Allow(ctx, "passkey-login:ip:"+reqctx.From(ctx).ClientIP, limitPerIP); err != nil {
		return Ceremony{}, err
	}
	assertion, session, err := p.wa.BeginDiscoverableLogin()
	if err != nil {
		return Ceremony{}, err
	}
	out := Ceremony{}
	if out.Options, err = json.Marshal(assertion.Response); err != nil {
		return Ceremony{}, err
	}
	err = db.WithTx(ctx, p.flows.Pool, func(ctx context.Context, tx pgx.Tx) error {
		out.Session, _, err = p.flows.Challenges.Create(ctx, tx, NewChallenge{Kind: ChallengePasskeyLogin,
			Payload: session, TTL: PasskeyCeremonyTTL})
		return err
	})
	if err != nil {
		return Ceremony{}, err
	}
	return out, nil
}

// LoginFinish verifies the assertion against the ceremony behind handle and the passkey the authenticator
// chose, records the use (signature counter, flags, time) and starts a session: a passkey skips the emailed
// code and the second factor. The ceremony is spent even when verification fails.
func (p *Passkeys) LoginFinish(ctx context.Context, handle string, assertion []byte) (TokenPair, error) {
	if err := p.available(); err != nil {
		return TokenPair{}, err
	}
	if err := p.flows.Limiter.Allow(ctx, "passkey-login-finish:ip:"+reqctx.From(ctx).ClientIP, limitPerIP); err != nil {
		return TokenPair{}, err
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes(assertion)
	if err != nil {
		return TokenPair{}, webauthnError(apierror.BadRequest, "invalid_assertion", err)
	}
	var (
		pair    TokenPair
		email   string
		refused error
	)
	err = db.WithTx(ctx, p.flows.Pool, func(ctx context.Context, tx pgx.Tx) error {
		r, err := p.flows.Challenges.Redeem(ctx, p.flows.Pool, tx, handle, ChallengePasskeyLogin, "")
		if errors.Is(err, ErrChallengeInvalid) {
			return errPasskeyNotVerified
		}
		if err != nil {
			return err
		}
		var session webauthn.SessionData
		if err := json.Unmarshal(r.Payload, &session); err != nil {
			return err
		}
		var (
			owner  *passkeyUser
			dbErr  error
			lookup = func(_, userHandle []byte) (webauthn.User, error) {
				owner, dbErr = p.userByHandle(ctx, tx, userHandle)
				if dbErr != nil {
					return nil, dbErr
				}
				return owner, nil
			}
		)
		_, cred, err := p.wa.ValidatePasskeyLogin(lookup, session, parsed)
		if dbErr != nil && !errors.Is(dbErr, pgx.ErrNoRows) {
			return dbErr
		}
		if err != nil {
			refused = webauthnError(apierror.Unauthorized, "passkey_not_verified", err)
			return nil // commit: the ceremony is spent
		}
		rowID := owner.rowIDs[string(cred.ID)]
		if err := dbq.New().PasskeyRecordUse(ctx, tx, dbq.PasskeyRecordUseParams{
			ID: rowID, SignCount: int64(cred.Authenticator.SignCount), CloneWarning: cred.Authenticator.CloneWarning,
			Flags: int16(cred.Flags.ProtocolValue()), Used: !cred.Authenticator.CloneWarning,
		}); err != nil {
			return err
		}
		if cred.Authenticator.CloneWarning {
			refused = errPasskeyCloned
			return nil // commit the warning
		}
		email = owner.email
		pair, err = p.flows.StartSession(ctx, tx, owner.id, PasskeyProvider)
		return err
	})
	if err == nil {
		err = refused
	}
	if err != nil {
		return TokenPair{}, err
	}
	p.flows.alert(ctx, email)
	return pair, nil
}

// List returns the user's passkeys under this deployment's relying party, oldest first.
func (p *Passkeys) List(ctx context.Context, userID uuid.UUID) ([]dbq.PasskeyCredential, error) {
	return dbq.New().PasskeyListByUser(ctx, p.flows.Pool, dbq.PasskeyListByUserParams{UserID: userID, RpID: p.rpID})
}

// Rename sets the display name of one of the user's passkeys; anyone else's is not found.
func (p *Passkeys) Rename(ctx context.Context, userID, id uuid.UUID, name string) (dbq.PasskeyCredential, error) {
	name = strings.TrimSpace(name)
	if name == "" || len([]rune(name)) > 255 {
		return dbq.PasskeyCredential{}, apierror.BadRequest("invalid_name", "A passkey name is 1 to 255 characters.")
	}
	row, err := dbq.New().PasskeyRename(ctx, p.flows.Pool, dbq.PasskeyRenameParams{ID: id, UserID: userID, Name: name})
	if errors.Is(err, pgx.ErrNoRows) {
		return dbq.PasskeyCredential{}, errPasskeyNotFound
	}
	return row, err
}

// Delete removes one of the user's passkeys so it no longer signs in; anyone else's is not found.
func (p *Passkeys) Delete(ctx context.Context, userID, id uuid.UUID) error {
	n, err := dbq.New().PasskeyDelete(ctx, p.flows.Pool, dbq.PasskeyDeleteParams{ID: id, UserID: userID})
	if err != nil {
		return err
	}
	if n == 0 {
		return errPasskeyNotFound
	}
	return nil
}

// passkeyUser is an account as WebAuthn sees it: its handle and its passkeys.
type passkeyUser struct {
	id          uuid.UUID
	email       string
	displayName string
	handle      []byte
	credentials []webauthn.Credential
	// rowIDs maps a credential id to its row, to record a sign-in.
	rowIDs map[string]uuid.UUID
}

// WebAuthnID is the user handle, the random value authenticators return to name the account.
func (u *passkeyUser) WebAuthnID() []byte { return u.handle }

// WebAuthnName is the account name the authenticator shows: the email.
func (u *passkeyUser) WebAuthnName() string { return u.email }

// WebAuthnDisplayName is the person's name, or the email when they have not given one.
func (u *passkeyUser) WebAuthnDisplayName() string { return u.displayName }

// WebAuthnCredentials are the account's passkeys under this relying party.
func (u *passkeyUser) WebAuthnCredentials() []webauthn.Credential { return u.credentials }

// user loads the account with its handle (created on first use) and its passkeys; lock holds the passkey rows
// while a sign-in advances a counter.
func (p *Passkeys) user(ctx context.Context, tx pgx.Tx, userID uuid.UUID, lock bool) (*passkeyUser, error) {
	q := dbq.New()
	row, err := q.UserGetByID(ctx, tx, userID)
	if err != nil {
		return nil, err
	}
	fresh := make([]byte, 32)
	_, _ = rand.Read(fresh)
	handle, err := q.WebAuthnUserEnsure(ctx, tx, dbq.WebAuthnUserEnsureParams{RpID: p.rpID, UserID: userID, Handle: fresh})
	if err != nil {
		return nil, err
	}
	list := dbq.PasskeyListByUserParams{UserID: userID, RpID: p.rpID}
	var rows []dbq.PasskeyCredential
	if lock {
		rows, err = q.PasskeyListByUserForUpdate(ctx, tx, dbq.PasskeyListByUserForUpdateParams(list))
	} else {
		rows, err = q.PasskeyListByUser(ctx, tx, list)
	}
	if err != nil {
		return nil, err
	}
	u := &passkeyUser{id: userID, email: row.Email, handle: handle, rowIDs: map[string]uuid.UUID{},
		displayName: strings.TrimSpace(row.FirstName + " " + row.LastName)}
	if u.displayName == "" {
		u.displayName = row.Email
	}
	for _, r := range rows {
		c, err := p.credential(r)
		if err != nil {
			return nil, err
		}
		u.credentials = append(u.credentials, c)
		u.rowIDs[string(r.CredentialID)] = r.ID
	}
	return u, nil
}

// userByHandle resolves the user handle an authenticator returned in a usernameless sign-in.
func (p *Passkeys) userByHandle(ctx context.Context, tx pgx.Tx, handle []byte) (*passkeyUser, error) {
	wu, err := dbq.New().WebAuthnUserByHandle(ctx, tx, dbq.WebAuthnUserByHandleParams{RpID: p.rpID, Handle: handle})
	if err != nil {
		return nil, err
	}
	return p.user(ctx, tx, wu.UserID, true)
}

// credential rebuilds the library's credential record from a row, opening the sealed public key.
func (p *Passkeys) credential(r dbq.PasskeyCredential) (webauthn.Credential, error) {
	key, err := p.keyring.Open(r.PublicKeySealed, passkeyContext(r.ID))
	if err != nil {
		return webauthn.Credential{}, fmt.Errorf("open passkey %s: %w", r.ID, err)
	}
	c := webauthn.Credential{
		ID: r.CredentialID, PublicKey: key, AttestationType: r.AttestationType, AttestationFormat: r.AttestationFormat,
		Flags: webauthn.NewCredentialFlags(protocol.AuthenticatorFlags(r.Flags)),
		Authenticator: webauthn.Authenticator{SignCount: uint32(r.SignCount), CloneWarning: r.CloneWarning,
			Attachment: protocol.AuthenticatorAttachment(r.Attachment)},
	}
	if r.Aaguid.Valid {
		c.Authenticator.AAGUID = r.Aaguid.UUID[:]
	}
	for _, t := range r.Transports {
		c.Transport = append(c.Transport, protocol.AuthenticatorTransport(t))
	}
	return c, nil
}

// webauthnError turns a verification failure into an API error that carries the library's reason.
func webauthnError(mk func(code, message string) *apierror.Error, code string, err error) error {
	msg := "The passkey response could not be verified"
	var pe *protocol.Error
	if errors.As(err, &pe) && pe.Details != "" {
		msg += ": " + pe.Details
	}
	return mk(code, msg+".").WithCause(err)
}

// passkeyContext binds a sealed public key to its row.
func passkeyContext(id uuid.UUID) string { return "passkey:" + id.String() }

// defaultPasskeyName names a passkey after its authenticator when the user gave no name.
func defaultPasskeyName(provider string, cred *webauthn.Credential) string {
	switch {
	case provider != "":
		return provider
	case cred.Authenticator.Attachment == protocol.CrossPlatform:
		return "Security key"
	default:
		return "Passkey"
	}
}

// passkeyProviders names the common passkey providers by AAGUID (from the community list at
// github.com/passkeydeveloper/passkey-authenticator-aaguids); an unknown AAGUID leaves the provider empty.
var passkeyProviders = map[uuid.UUID]string{
	uuid.MustParse("ea9b8d66-4d01-1d21-3ce4-b6b48cb575d4"): "Google Password Manager",
	uuid.MustParse("adce0002-35bc-c60a-648b-0b25f1f05503"): "Chrome on Mac",
	uuid.MustParse("08987058-cadc-4b81-b6e1-30de50dcbe96"): "Windows Hello",
	uuid.MustParse("9ddd1817-af5a-4672-a2b9-3e3dd95000a9"): "Windows Hello",
	uuid.MustParse("6028b017-b1d4-4c02-b4b3-afcdafc96bb2"): "Windows Hello",
	uuid.MustParse("fbfc3007-154e-4ecc-8c0b-6e020557d7bd"): "iCloud Keychain",
	uuid.MustParse("dd4ec289-e01d-41c9-bb89-70fa845d4bf2"): "iCloud Keychain (Managed)",
	uuid.MustParse("bada5566-a7aa-401f-bd96-45619a55120d"): "1Password",
	uuid.MustParse("d548826e-79b4-db40-a3d8-11116f7e8349"): "Bitwarden",
	uuid.MustParse("531126d6-e717-415c-9320-3d9aa6981239"): "Dashlane",
	uuid.MustParse("b84e4048-15dc-4dd0-8640-f4f60813c8af"): "NordPass",
	uuid.MustParse("0ea242b4-43c4-4a1b-8b17-dd6d0b6baec6"): "Keeper",
	uuid.MustParse("53414d53-554e-4700-0000-000000000000"): "Samsung Pass",
	uuid.MustParse("771b48fd-d3d4-4f74-9232-fc157ab0507a"): "Edge on Mac",
}
