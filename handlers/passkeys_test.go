package handlers_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/platform/config"
)

// The deployment the passkey tests run: the web app, where the browser runs the ceremony, at outflow.test (so
// the relying party id) and the API at api.outflow.test.
const (
	passkeyRPID   = "outflow.test"
	passkeyOrigin = "https://outflow.test"
)

func passkeyEnv(t *testing.T) *apitest.Env {
	return apitest.New(t, func(c *config.Config) {
		c.PublicURL, c.AppURL = "https://api."+passkeyRPID, passkeyOrigin
	})
}

var b64 = base64.RawURLEncoding

// authenticator is a software WebAuthn authenticator: one ECDSA P-256 credential, "none" attestation, and the
// browser's part (clientDataJSON) too. It encodes everything itself, so the server is checked against the
// specification rather than against its own library.
type authenticator struct {
	key        *ecdsa.PrivateKey
	id         []byte
	aaguid     uuid.UUID
	attachment string
	transports []string
	synced     bool // backup eligible and backed up, like a synced passkey
	origin     string
	counter    uint32
	userHandle []byte // learnt at registration, returned at sign-in
}

func newAuthenticator(t *testing.T, aaguid uuid.UUID, attachment string, synced bool, transports ...string) *authenticator {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	id := make([]byte, 32)
	_, _ = rand.Read(id)
	return &authenticator{key: key, id: id, aaguid: aaguid, attachment: attachment, synced: synced,
		transports: transports, origin: passkeyOrigin}
}

// creationOptions is what the authenticator reads from PublicKeyCredentialCreationOptions.
type creationOptions struct {
	Challenge string `json:"challenge"`
	RP        struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"rp"`
	User struct {
		ID          string `json:"id"`
		Name        string `json:"name"`
		DisplayName string `json:"displayName"`
	} `json:"user"`
	PubKeyCredParams []struct {
		Type string `json:"type"`
		Alg  int    `json:"alg"`
	} `json:"pubKeyCredParams"`
	ExcludeCredentials []struct {
		ID   string `json:"id"`
		Type string `json:"type"`
	} `json:"excludeCredentials"`
	AuthenticatorSelection struct {
		ResidentKey      string `json:"residentKey"`
		UserVerification string `json:"userVerification"`
	} `json:"authenticatorSelection"`
	Attestation string `json:"attestation"`
}

// requestOptions is what the authenticator reads from PublicKeyCredentialRequestOptions.
type requestOptions struct {
	Challenge        string            `json:"challenge"`
	RPID             string            `json:"rpId"`
	UserVerification string            `json:"userVerification"`
	AllowCredentials []json.RawMessage `json:"allowCredentials"`
}

func decodeOptions(t *testing.T, raw interface{ MarshalJSON() ([]byte, error) }, into any) {
	t.Helper()
	b, err := raw.MarshalJSON()
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, into))
}

func (a *authenticator) flags(attested bool) byte {
	f := byte(0x01 | 0x04) // user present, user verified
	if a.synced {
		f |= 0x08 | 0x10 // backup eligible, backed up
	}
	if attested {
		f |= 0x40
	}
	return f
}

func (a *authenticator) clientData(typ, challenge string) []byte {
	b, _ := json.Marshal(map[string]any{"type": typ, "challenge": challenge, "origin": a.origin, "crossOrigin": false})
	return b
}

// create answers navigator.credentials.create for opts: the attestation credential as the browser sends it.
func (a *authenticator) create(t *testing.T, opts creationOptions) api.PasskeyRegisterFinishRequestCredential {
	t.Helper()
	a.userHandle = mustB64(t, opts.User.ID)
	point, err := a.key.PublicKey.ECDH()
	require.NoError(t, err)
	xy := point.Bytes()[1:] // uncompressed point without the 0x04 prefix
	coseKey := cborMap(cborInt(1), cborInt(2), cborInt(3), cborInt(-7), cborInt(-1), cborInt(1),
		cborInt(-2), cborBytes(xy[:32]), cborInt(-3), cborBytes(xy[32:]))

	rpHash := sha256.Sum256([]byte(opts.RP.ID))
	auth := append(rpHash[:], a.flags(true))
	auth = binary.BigEndian.AppendUint32(auth, a.counter)
	auth = append(auth, a.aaguid[:]...)
	auth = binary.BigEndian.AppendUint16(auth, uint16(len(a.id)))
	auth = append(auth, a.id...)
	auth = append(auth, coseKey...)
	attestation := cborMap(cborText("fmt"), cborText("none"), cborText("attStmt"), cborMap(), cborText("authData"), cborBytes(auth))

	return credentialJSON[api.PasskeyRegisterFinishRequestCredential](t, map[string]any{
		"id": b64.EncodeToString(a.id), "rawId": b64.EncodeToString(a.id), "type": "public-key",
		"authenticatorAttachment": a.attachment, "clientExtensionResults": map[string]any{},
		"response": map[string]any{
			"clientDataJSON":    b64.EncodeToString(a.clientData("webauthn.create", opts.Challenge)),
			"attestationObject": b64.EncodeToString(attestation),
			"transports":        a.transports,
		},
	})
}

// get answers navigator.credentials.get for opts: the assertion signed with the credential's key (or with
// signer, to forge one).
func (a *authenticator) get(t *testing.T, opts requestOptions, signer *ecdsa.PrivateKey) api.PasskeyLoginFinishRequestCredential {
	t.Helper()
	a.counter++
	rpHash := sha256.Sum256([]byte(opts.RPID))
	auth := append(rpHash[:], a.flags(false))
	auth = binary.BigEndian.AppendUint32(auth, a.counter)
	clientData := a.clientData("webauthn.get", opts.Challenge)
	clientHash := sha256.Sum256(clientData)
	digest := sha256.Sum256(append(append([]byte{}, auth...), clientHash[:]...))
	if signer == nil {
		signer = a.key
	}
	sig, err := ecdsa.SignASN1(rand.Reader, signer, digest[:])
	require.NoError(t, err)
	return credentialJSON[api.PasskeyLoginFinishRequestCredential](t, map[string]any{
		"id": b64.EncodeToString(a.id), "rawId": b64.EncodeToString(a.id), "type": "public-key",
		"authenticatorAttachment": a.attachment, "clientExtensionResults": map[string]any{},
		"response": map[string]any{
			"clientDataJSON":    b64.EncodeToString(clientData),
			"authenticatorData": b64.EncodeToString(auth),
			"signature":         b64.EncodeToString(sig),
			"userHandle":        b64.EncodeToString(a.userHandle),
		},
	})
}

func credentialJSON[T any, P interface {
	*T
	UnmarshalJSON([]byte) error
}](t *testing.T, v map[string]any) T {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var out T
	require.NoError(t, P(&out).UnmarshalJSON(b))
	return out
}

func mustB64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := b64.DecodeString(s)
	require.NoError(t, err)
	return b
}

// The few CBOR shapes WebAuthn needs (RFC 8949): unsigned and negative integers, byte and text strings, maps.
func cborHead(major byte, n int) []byte {
	switch {
	case n < 24:
		return []byte{major<<5 | byte(n)}
	case n < 1<<8:
		return []byte{major<<5 | 24, byte(n)}
	default:
		return []byte{major<<5 | 25, byte(n >> 8), byte(n)}
	}
}

func cborInt(v int) []byte {
	if v >= 0 {
		return cborHead(0, v)
	}
	return cborHead(1, -1-v)
}

func cborBytes(b []byte) []byte { return append(cborHead(2, len(b)), b...) }
func cborText(s string) []byte  { return append(cborHead(3, len(s)), s...) }

func cborMap(pairs ...[]byte) []byte {
	out := cborHead(5, len(pairs)/2)
	for _, p := range pairs {
		out = append(out, p...)
	}
	return out
}

// registerPasskey runs a whole registration ceremony for the session behind c.
func registerPasskey(t *testing.T, c *api.Client, a *authenticator, name string) *api.PasskeyCredential {
	t.Helper()
	ctx := context.Background()
	begin, err := c.AuthPasskeyRegisterBegin(ctx, api.AuthPasskeyRegisterBeginParams{})
	require.NoError(t, err)
	var opts creationOptions
	decodeOptions(t, begin.PublicKey, &opts)
	req := &api.PasskeyRegisterFinishRequest{Session: api.NewOptString(begin.Session), Credential: a.create(t, opts)}
	if name != "" {
		req.Name = api.NewOptString(name)
	}
	cred, err := c.AuthPasskeyRegisterFinish(ctx, req, api.AuthPasskeyRegisterFinishParams{})
	require.NoError(t, err)
	return cred
}

// beginPasskeyLogin starts a usernameless sign-in and returns the options and the session handle.
func beginPasskeyLogin(t *testing.T, env *apitest.Env) (requestOptions, string) {
	t.Helper()
	begin, err := env.Client(t, "").AuthPasskeyLoginBegin(context.Background())
	require.NoError(t, err)
	var opts requestOptions
	decodeOptions(t, begin.PublicKey.Value, &opts)
	return opts, begin.Session.Value
}

var iCloudKeychain = uuid.MustParse("fbfc3007-154e-4ecc-8c0b-6e020557d7bd")

func TestPasskeyRegistration(t *testing.T) {
	t.Parallel()
	env := passkeyEnv(t)
	ctx := context.Background()
	c := env.Client(t, env.SignUp(t, "ada@example.com").AccessToken)

	list, err := c.AuthListPasskeyCredentials(ctx)
	require.NoError(t, err)
	require.Empty(t, list)

	begin, err := c.AuthPasskeyRegisterBegin(ctx, api.AuthPasskeyRegisterBeginParams{})
	require.NoError(t, err)
	require.NotEmpty(t, begin.Session)
	var opts creationOptions
	decodeOptions(t, begin.PublicKey, &opts)
	require.Equal(t, passkeyRPID, opts.RP.ID)
	require.Equal(t, "Outflow", opts.RP.Name)
	require.Equal(t, "ada@example.com", opts.User.Name)
	require.Len(t, mustB64(t, opts.User.ID), 32, "the user handle is random, not the account id")
	require.GreaterOrEqual(t, len(mustB64(t, opts.Challenge)), 16)
	require.Equal(t, "required", opts.AuthenticatorSelection.ResidentKey)
	require.Equal(t, "required", opts.AuthenticatorSelection.UserVerification)
	require.Contains(t, opts.PubKeyCredParams, struct {
		Type string `json:"type"`
		Alg  int    `json:"alg"`
	}{"public-key", -7})
	require.Empty(t, opts.ExcludeCredentials)

	phone := newAuthenticator(t, iCloudKeychain, "platform", true, "internal", "hybrid")
	attestation := phone.create(t, opts)
	cred, err := c.AuthPasskeyRegisterFinish(ctx, &api.PasskeyRegisterFinishRequest{Session: api.NewOptString(begin.Session),
		Credential: attestation}, api.AuthPasskeyRegisterFinishParams{})
	require.NoError(t, err)
	require.Equal(t, "iCloud Keychain", cred.Name, "named after its authenticator")
	require.Equal(t, "iCloud Keychain", cred.Provider.Value)
	require.Equal(t, b64.EncodeToString(phone.id), cred.CredentialID)
	require.Equal(t, []string{"internal", "hybrid"}, cred.Transports)
	require.True(t, cred.BackupState)
	require.True(t, cred.LastUsedAt.Set && cred.LastUsedAt.Null, "never used yet")

	// The ceremony is single use.
	_, err = c.AuthPasskeyRegisterFinish(ctx, &api.PasskeyRegisterFinishRequest{Session: api.NewOptString(begin.Session),
		Credential: attestation}, api.AuthPasskeyRegisterFinishParams{})
	requireAPIError(t, err, 400, "no_pending_ceremony")

	// The next ceremony excludes the registered passkey; registering it again anyway is a conflict.
	begin, err = c.AuthPasskeyRegisterBegin(ctx, api.AuthPasskeyRegisterBeginParams{})
	require.NoError(t, err)
	decodeOptions(t, begin.PublicKey, &opts)
	require.Len(t, opts.ExcludeCredentials, 1)
	require.Equal(t, b64.EncodeToString(phone.id), opts.ExcludeCredentials[0].ID)
	_, err = c.AuthPasskeyRegisterFinish(ctx, &api.PasskeyRegisterFinishRequest{Session: api.NewOptString(begin.Session),
		Credential: phone.create(t, opts)}, api.AuthPasskeyRegisterFinishParams{})
	requireAPIError(t, err, 409, "already_exists")

	// Without a session the newest pending ceremony is used; a given name wins over the authenticator's.
	begin, err = c.AuthPasskeyRegisterBegin(ctx, api.AuthPasskeyRegisterBeginParams{})
	require.NoError(t, err)
	decodeOptions(t, begin.PublicKey, &opts)
	key := newAuthenticator(t, uuid.Nil, "cross-platform", false, "usb")
	cred, err = c.AuthPasskeyRegisterFinish(ctx, &api.PasskeyRegisterFinishRequest{Credential: key.create(t, opts),
		Name: api.NewOptString("Desk key")}, api.AuthPasskeyRegisterFinishParams{})
	require.NoError(t, err)
	require.Equal(t, "Desk key", cred.Name)
	require.False(t, cred.Provider.Set)
	require.False(t, cred.BackupState)
	// A page on the API's own origin may run the ceremony too.
	nfc := newAuthenticator(t, uuid.Nil, "cross-platform", false, "nfc")
	nfc.origin = "https://api." + passkeyRPID
	nameless := registerPasskey(t, c, nfc, "")
	require.Equal(t, "Security key", nameless.Name)

	list, err = c.AuthListPasskeyCredentials(ctx)
	require.NoError(t, err)
	require.Len(t, list, 3)
	require.Equal(t, []string{"iCloud Keychain", "Desk key", "Security key"}, []string{list[0].Name, list[1].Name, list[2].Name})
}

func TestPasskeyRegistrationRefusals(t *testing.T) {
	t.Parallel()
	env := passkeyEnv(t)
	ctx := context.Background()
	c := env.Client(t, env.SignUp(t, "grace@example.com").AccessToken)
	other := env.Client(t, env.SignUp(t, "alan@example.com").AccessToken)

	// No ceremony pending at all.
	a := newAuthenticator(t, uuid.Nil, "platform", false, "internal")
	_, err := c.AuthPasskeyRegisterFinish(ctx, &api.PasskeyRegisterFinishRequest{
		Credential: a.create(t, creationOptions{Challenge: b64.EncodeToString([]byte("a challenge nobody issued"))}),
	}, api.AuthPasskeyRegisterFinishParams{})
	requireAPIError(t, err, 400, "no_pending_ceremony")

	finish := func(c *api.Client, session string, cred api.PasskeyRegisterFinishRequestCredential) error {
		_, err := c.AuthPasskeyRegisterFinish(ctx, &api.PasskeyRegisterFinishRequest{Session: api.NewOptString(session),
			Credential: cred}, api.AuthPasskeyRegisterFinishParams{})
		return err
	}
	begin := func(c *api.Client) (creationOptions, string) {
		b, err := c.AuthPasskeyRegisterBegin(ctx, api.AuthPasskeyRegisterBeginParams{})
		require.NoError(t, err)
		var opts creationOptions
		decodeOptions(t, b.PublicKey, &opts)
		return opts, b.Session
	}

	// Another user's ceremony is not the caller's.
	opts, session := begin(other)
	requireAPIError(t, finish(c, session, a.create(t, opts)), 400, "no_pending_ceremony")

	// A response for another challenge, from another origin, or for another relying party does not verify,
	// and spends the ceremony.
	opts, session = begin(c)
	wrong := opts
	wrong.Challenge = b64.EncodeToString([]byte("not the challenge that was issued"))
	requireAPIError(t, finish(c, session, a.create(t, wrong)), 400, "invalid_attestation")
	requireAPIError(t, finish(c, session, a.create(t, opts)), 400, "no_pending_ceremony")

	opts, session = begin(c)
	a.origin = "https://evil.example"
	requireAPIError(t, finish(c, session, a.create(t, opts)), 400, "invalid_attestation")
	a.origin = passkeyOrigin

	opts, session = begin(c)
	wrong = opts
	wrong.RP.ID = "evil.example"
	requireAPIError(t, finish(c, session, a.create(t, wrong)), 400, "invalid_attestation")

	// Not an attestation at all.
	_, session = begin(c)
	junk := credentialJSON[api.PasskeyRegisterFinishRequestCredential](t, map[string]any{"id": "x", "type": "public-key"})
	requireAPIError(t, finish(c, session, junk), 400, "invalid_attestation")

	list, err := c.AuthListPasskeyCredentials(ctx)
	require.NoError(t, err)
	require.Empty(t, list)
}

func TestPasskeySignIn(t *testing.T) {
	t.Parallel()
	env := passkeyEnv(t)
	ctx := context.Background()
	public := env.Client(t, "")
	const email = "edsger@example.com"
	owner := env.Client(t, env.SignUp(t, email).AccessToken)
	phone := newAuthenticator(t, iCloudKeychain, "platform", true, "internal", "hybrid")
	registered := registerPasskey(t, owner, phone, "")

	opts, session := beginPasskeyLogin(t, env)
	require.Equal(t, passkeyRPID, opts.RPID)
	require.Equal(t, "required", opts.UserVerification)
	require.Empty(t, opts.AllowCredentials, "usernameless: the authenticator picks the account")
	mails := len(env.Mail.To(email))

	assertion := phone.get(t, opts, nil)
	pair, err := public.AuthPasskeyLoginFinish(ctx, &api.PasskeyLoginFinishRequest{Session: session, Credential: assertion})
	require.NoError(t, err)
	me := env.Client(t, pair.AccessToken)
	sessions, err := me.AuthListSessions(ctx)
	require.NoError(t, err)
	require.Equal(t, "passkey", sessions[0].AuthProvider)
	require.Len(t, env.Mail.To(email), mails+1, "no emailed code; only the new sign-in alert")
	require.Contains(t, env.Mail.To(email)[mails].Subject, "New sign-in")
	list, err := me.AuthListPasskeyCredentials(ctx)
	require.NoError(t, err)
	require.Equal(t, registered.ID, list[0].ID)
	require.True(t, list[0].LastUsedAt.Set && !list[0].LastUsedAt.Null)

	// The refresh token of a passkey session works like any other.
	_, err = public.AuthRefresh(ctx, &api.RefreshRequest{RefreshToken: pair.RefreshToken})
	require.NoError(t, err)

	// The ceremony is single use: the same assertion again is refused.
	_, err = public.AuthPasskeyLoginFinish(ctx, &api.PasskeyLoginFinishRequest{Session: session, Credential: assertion})
	requireAPIError(t, err, 401, "passkey_not_verified")

	// A forged signature, another origin or an unknown account do not sign in, and spend the ceremony.
	stranger, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	opts, session = beginPasskeyLogin(t, env)
	_, err = public.AuthPasskeyLoginFinish(ctx, &api.PasskeyLoginFinishRequest{Session: session, Credential: phone.get(t, opts, stranger)})
	requireAPIError(t, err, 401, "passkey_not_verified")
	_, err = public.AuthPasskeyLoginFinish(ctx, &api.PasskeyLoginFinishRequest{Session: session, Credential: phone.get(t, opts, nil)})
	requireAPIError(t, err, 401, "passkey_not_verified")

	opts, session = beginPasskeyLogin(t, env)
	phone.origin = "https://evil.example"
	_, err = public.AuthPasskeyLoginFinish(ctx, &api.PasskeyLoginFinishRequest{Session: session, Credential: phone.get(t, opts, nil)})
	requireAPIError(t, err, 401, "passkey_not_verified")
	phone.origin = passkeyOrigin

	opts, session = beginPasskeyLogin(t, env)
	unknown := newAuthenticator(t, uuid.Nil, "platform", false, "internal")
	unknown.userHandle = []byte("0123456789abcdef0123456789abcdef")
	_, err = public.AuthPasskeyLoginFinish(ctx, &api.PasskeyLoginFinishRequest{Session: session, Credential: unknown.get(t, opts, nil)})
	requireAPIError(t, err, 401, "passkey_not_verified")

	_, err = public.AuthPasskeyLoginFinish(ctx, &api.PasskeyLoginFinishRequest{Session: "forged.handle", Credential: phone.get(t, opts, nil)})
	requireAPIError(t, err, 401, "passkey_not_verified")

	// Not an assertion at all, or no credential.
	_, session = beginPasskeyLogin(t, env)
	junk := credentialJSON[api.PasskeyLoginFinishRequestCredential](t, map[string]any{"id": "x", "type": "public-key"})
	_, err = public.AuthPasskeyLoginFinish(ctx, &api.PasskeyLoginFinishRequest{Session: session, Credential: junk})
	requireAPIError(t, err, 400, "invalid_assertion")
	resp := env.Do(t, "POST", "/v1/auth/passkey/login/finish", "", strings.NewReader(`{"session":"x"}`), http.Header{"Content-Type": {"application/json"}})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)

	// Still the real key signs in; a user with 2FA is not asked for a code (the passkey verified the user).
	_, _, _ = enrolTOTP(t, owner)
	opts, session = beginPasskeyLogin(t, env)
	_, err = public.AuthPasskeyLoginFinish(ctx, &api.PasskeyLoginFinishRequest{Session: session, Credential: phone.get(t, opts, nil)})
	require.NoError(t, err)

	// A signature counter that goes backwards means a copied key: refused, and for good.
	phone.counter -= 2
	opts, session = beginPasskeyLogin(t, env)
	_, err = public.AuthPasskeyLoginFinish(ctx, &api.PasskeyLoginFinishRequest{Session: session, Credential: phone.get(t, opts, nil)})
	requireAPIError(t, err, 401, "passkey_cloned")
	phone.counter += 10
	opts, session = beginPasskeyLogin(t, env)
	_, err = public.AuthPasskeyLoginFinish(ctx, &api.PasskeyLoginFinishRequest{Session: session, Credential: phone.get(t, opts, nil)})
	requireAPIError(t, err, 401, "passkey_cloned")
}

func TestPasskeyManagement(t *testing.T) {
	t.Parallel()
	env := passkeyEnv(t)
	ctx := context.Background()
	ada := env.Client(t, env.SignUp(t, "ada@example.com").AccessToken)
	alan := env.Client(t, env.SignUp(t, "alan@example.com").AccessToken)
	key := newAuthenticator(t, uuid.Nil, "cross-platform", false, "usb")
	mine := registerPasskey(t, ada, key, "")
	theirs := registerPasskey(t, alan, newAuthenticator(t, uuid.Nil, "platform", false, "internal"), "")

	renamed, err := ada.AuthRenamePasskeyCredential(ctx, &api.PasskeyRenameRequest{Name: "  Travel key  "}, api.AuthRenamePasskeyCredentialParams{ID: mine.ID})
	require.NoError(t, err)
	require.Equal(t, "Travel key", renamed.Name)
	require.Equal(t, mine.CredentialID, renamed.CredentialID)
	_, err = ada.AuthRenamePasskeyCredential(ctx, &api.PasskeyRenameRequest{Name: "   "}, api.AuthRenamePasskeyCredentialParams{ID: mine.ID})
	requireAPIError(t, err, 400, "invalid_name")
	_, err = ada.AuthRenamePasskeyCredential(ctx, &api.PasskeyRenameRequest{Name: strings.Repeat("x", 256)}, api.AuthRenamePasskeyCredentialParams{ID: mine.ID})
	requireAPIError(t, err, 400, "invalid_name")

	// Someone else's passkey does not exist for the caller.
	_, err = ada.AuthRenamePasskeyCredential(ctx, &api.PasskeyRenameRequest{Name: "Mine now"}, api.AuthRenamePasskeyCredentialParams{ID: theirs.ID})
	requireAPIError(t, err, 404, "not_found")
	requireAPIError(t, ada.AuthDeletePasskeyCredential(ctx, api.AuthDeletePasskeyCredentialParams{ID: theirs.ID}), 404, "not_found")
	list, err := ada.AuthListPasskeyCredentials(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1, "only the caller's own")
	list, err = alan.AuthListPasskeyCredentials(ctx)
	require.NoError(t, err)
	require.Equal(t, theirs.Name, list[0].Name)

	// A malformed id is a 404, as an unknown one (part 1: "404 unknown id or malformed id").
	resp := env.Do(t, "DELETE", "/v1/auth/passkey/credentials/not-a-uuid", env.SignUp(t, "kurt@example.com").AccessToken, nil, nil)
	require.Equal(t, http.StatusNotFound, resp.StatusCode)

	// A deleted passkey no longer signs in.
	require.NoError(t, ada.AuthDeletePasskeyCredential(ctx, api.AuthDeletePasskeyCredentialParams{ID: mine.ID}))
	requireAPIError(t, ada.AuthDeletePasskeyCredential(ctx, api.AuthDeletePasskeyCredentialParams{ID: mine.ID}), 404, "not_found")
	list, err = ada.AuthListPasskeyCredentials(ctx)
	require.NoError(t, err)
	require.Empty(t, list)
	opts, session := beginPasskeyLogin(t, env)
	_, err = env.Client(t, "").AuthPasskeyLoginFinish(ctx, &api.PasskeyLoginFinishRequest{Session: session, Credential: key.get(t, opts, nil)})
	requireAPIError(t, err, 401, "passkey_not_verified")
}

func TestPasskeyManagementIsSessionOnly(t *testing.T) {
	t.Parallel()
	env := passkeyEnv(t)
	ctx := context.Background()
	key := env.Client(t, env.Bootstrap(t, "acme").APIKey)
	id := uuid.New()
	_, err := key.AuthListPasskeyCredentials(ctx)
	requireAPIError(t, err, 403, "session_required")
	_, err = key.AuthPasskeyRegisterBegin(ctx, api.AuthPasskeyRegisterBeginParams{})
	requireAPIError(t, err, 403, "session_required")
	_, err = key.AuthPasskeyRegisterFinish(ctx, &api.PasskeyRegisterFinishRequest{Credential: api.PasskeyRegisterFinishRequestCredential{}}, api.AuthPasskeyRegisterFinishParams{})
	requireAPIError(t, err, 403, "session_required")
	_, err = key.AuthRenamePasskeyCredential(ctx, &api.PasskeyRenameRequest{Name: "x"}, api.AuthRenamePasskeyCredentialParams{ID: id})
	requireAPIError(t, err, 403, "session_required")
	requireAPIError(t, key.AuthDeletePasskeyCredential(ctx, api.AuthDeletePasskeyCredentialParams{ID: id}), 403, "session_required")
	_, err = env.Client(t, "").AuthListPasskeyCredentials(ctx)
	requireAPIError(t, err, 401, "missing_credential")
}

func TestPasskeySignInIsRateLimitedPerSourceIP(t *testing.T) {
	t.Parallel()
	env := passkeyEnv(t)
	for _, path := range []string{"/v1/auth/passkey/login/begin", "/v1/auth/passkey/login/finish"} {
		body := `{"session":"forged.handle","credential":{"id":"x"}}`
		var last *http.Response
		for range 31 {
			last = env.Do(t, "POST", path, "", strings.NewReader(body), http.Header{"Content-Type": {"application/json"}})
			if last.StatusCode == http.StatusTooManyRequests {
				break
			}
		}
		require.Equal(t, http.StatusTooManyRequests, last.StatusCode, path)
		require.NotEmpty(t, last.Header.Get("Retry-After"), path)
	}
}

func TestPasskeysNeedAHostName(t *testing.T) {
	t.Parallel()
	env := apitest.New(t) // the development default public URL is an IP address, which WebAuthn refuses
	_, err := env.Client(t, "").AuthPasskeyLoginBegin(context.Background())
	requireAPIError(t, err, 503, "passkeys_unavailable")
	_, err = env.Client(t, env.SignUp(t, "ada@example.com").AccessToken).AuthPasskeyRegisterBegin(context.Background(), api.AuthPasskeyRegisterBeginParams{})
	requireAPIError(t, err, 503, "passkeys_unavailable")
}
