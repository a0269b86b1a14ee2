package oidc

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// ErrRejected means the provider's answer does not prove an identity: an ID token with a bad signature,
// issuer, audience, expiry or nonce, or an authorization code the token endpoint refused.
var ErrRejected = errors.New("oidc: identity not verified")

// ErrUnavailable means the provider could not be asked: unreachable, slow, or answering something that is
// not a valid discovery document, key set or token answer.
var ErrUnavailable = errors.New("oidc: provider unavailable")

// Cache lifetimes: discovery documents and key sets change rarely; an ID token naming a key not in the cached
// set triggers a refetch, at most once per keyRefetchInterval so forged key ids cannot make the server hammer
// the provider.
const (
	metadataTTL        = time.Hour
	keysTTL            = time.Hour
	keyRefetchInterval = 30 * time.Second
	// clockLeeway absorbs clock skew between the provider and this server.
	clockLeeway = time.Minute
)

// signatureAlgorithms are the asymmetric algorithms an ID token may be signed with; "none" and HMAC (which
// would make the client secret a signing key) are never accepted.
var signatureAlgorithms = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA,
}

// Config names one provider and this deployment's registration with it.
type Config struct {
	// Issuer is the provider's issuer URL; the discovery document is read from
	// <Issuer>/.well-known/openid-configuration and must name the same issuer.
	Issuer string
	// ClientID is the audience ID tokens must be issued for.
	ClientID string
	// ClientSecret authenticates the code exchange; empty for a public client (PKCE only).
	ClientSecret string
	// OtherIssuers are further "iss" values the provider signs with (Google also uses "accounts.google.com").
	OtherIssuers []string
	// HTTPClient makes the provider calls; nil uses NewHTTPClient.
	HTTPClient *http.Client
}

// Metadata is the part of a discovery document sign-in needs.
type Metadata struct {
	// Issuer must equal the configured issuer (OIDC Discovery 1.0, section 4.3).
	Issuer string `json:"issuer"`
	// AuthorizationEndpoint is where the browser is sent; TokenEndpoint redeems codes; JWKSURI publishes the
	// keys ID tokens are signed with.
	AuthorizationEndpoint string `json:"authorization_endpoint"`
	TokenEndpoint         string `json:"token_endpoint"`
	JWKSURI               string `json:"jwks_uri"`
	// TokenEndpointAuthMethods says how the client secret may be sent (client_secret_basic when empty).
	TokenEndpointAuthMethods []string `json:"token_endpoint_auth_methods_supported"`
}

// Provider talks to one OpenID Connect provider; it is safe for concurrent use and caches the discovery
// document and key set it reads.
type Provider struct {
	cfg    Config
	client *http.Client
	now    func() time.Time

	mu         sync.Mutex
	meta       *Metadata
	metaAt     time.Time
	keys       jose.JSONWebKeySet
	keysAt     time.Time
	keysFailed bool
}

// New returns a provider; nothing is fetched until the first call that needs it.
func New(cfg Config) *Provider {
	cfg.Issuer = strings.TrimRight(cfg.Issuer, "/")
	client := cfg.HTTPClient
	if client == nil {
		client = NewHTTPClient()
	}
	return &Provider{cfg: cfg, client: client, now: time.Now}
}

// Metadata returns the provider's discovery document, fetched at most once an hour; when a refetch fails the
// previous document keeps serving.
func (p *Provider) Metadata(ctx context.Context) (Metadata, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.metadataLocked(ctx)
}

func (p *Provider) metadataLocked(ctx context.Context) (Metadata, error) {
	if p.meta != nil && p.now().Sub(p.metaAt) < metadataTTL {
		return *p.meta, nil
	}
	m, err := p.fetchMetadata(ctx)
	if err != nil {
		if p.meta != nil {
			// Keep serving the last document and try again after keyRefetchInterval, not on every call.
			p.metaAt = p.now().Add(keyRefetchInterval - metadataTTL)
			return *p.meta, nil
		}
		return Metadata{}, err
	}
	p.meta, p.metaAt = &m, p.now()
	return m, nil
}

func (p *Provider) fetchMetadata(ctx context.Context) (Metadata, error) {
	if _, err := checkEndpoint(p.cfg.Issuer); err != nil {
		return Metadata{}, fmt.Errorf("%w: issuer: %v", ErrUnavailable, err)
	}
	var m Metadata
	if err := getJSON(ctx, p.client, p.cfg.Issuer+"/.well-known/openid-configuration", &m); err != nil {
		return Metadata{}, err
	}
	if m.Issuer != p.cfg.Issuer {
		return Metadata{}, fmt.Errorf("%w: discovery document names issuer %q, configured %q", ErrUnavailable, m.Issuer, p.cfg.Issuer)
	}
	for name, v := range map[string]string{"authorization_endpoint": m.AuthorizationEndpoint,
		"token_endpoint": m.TokenEndpoint, "jwks_uri": m.JWKSURI} {
		if _, err := checkEndpoint(v); err != nil {
			return Metadata{}, fmt.Errorf("%w: discovery document %s: %v", ErrUnavailable, name, err)
		}
	}
	return m, nil
}

// verificationKeys returns the published keys that may have signed a token with key id kid (every signing
// key when kid is empty). The key set is refetched when it is an hour old, and sooner when it lacks kid (the
// provider rotated), but never more than once per keyRefetchInterval. While the provider is unreachable the
// last key set keeps verifying.
func (p *Provider) verificationKeys(ctx context.Context, kid string) ([]jose.JSONWebKey, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	found := p.matchingKeys(kid)
	expired := p.keysAt.IsZero() || now.Sub(p.keysAt) >= keysTTL
	if len(found) > 0 && !expired && !p.keysFailed {
		return found, nil
	}
	switch {
	case p.keysAt.IsZero() || now.Sub(p.keysAt) >= keyRefetchInterval:
		if err := p.fetchKeysLocked(ctx); err != nil {
			if len(found) > 0 {
				return found, nil
			}
			return nil, err
		}
		found = p.matchingKeys(kid)
	case p.keysFailed && len(found) == 0:
		return nil, fmt.Errorf("%w: the key set could not be fetched a moment ago", ErrUnavailable)
	}
	if len(found) == 0 {
		return nil, fmt.Errorf("%w: no published key %q", ErrRejected, kid)
	}
	return found, nil
}

func (p *Provider) fetchKeysLocked(ctx context.Context) error {
	m, err := p.metadataLocked(ctx)
	if err != nil {
		return err
	}
	var set jose.JSONWebKeySet
	err = getJSON(ctx, p.client, m.JWKSURI, &set)
	p.keysAt = p.now()
	p.keysFailed = err != nil
	if err != nil {
		return err
	}
	p.keys = set
	return nil
}

func (p *Provider) matchingKeys(kid string) []jose.JSONWebKey {
	var out []jose.JSONWebKey
	for _, k := range p.keys.Keys {
		if (kid == "" || k.KeyID == kid) && k.IsPublic() && (k.Use == "" || k.Use == "sig") {
			out = append(out, k)
		}
	}
	return out
}

// Identity is who an ID token says signed in.
type Identity struct {
	// Subject is the provider's stable identifier of the person.
	Subject string
	// Email is the address the provider asserts, lowercased; EmailVerified says whether it checked it.
	Email         string
	EmailVerified bool
	// GivenName and FamilyName are the person's names when the token carries them (Apple's never do).
	GivenName  string
	FamilyName string
}

type idClaims struct {
	jwt.Claims
	AuthorizedParty string   `json:"azp"`
	Nonce           string   `json:"nonce"`
	Email           string   `json:"email"`
	EmailVerified   flexBool `json:"email_verified"`
	GivenName       string   `json:"given_name"`
	FamilyName      string   `json:"family_name"`
}

// flexBool reads a JSON boolean, or the strings "true" and "false" Apple sends instead.
type flexBool bool

func (b *flexBool) UnmarshalJSON(data []byte) error {
	switch strings.Trim(string(data), `"`) {
	case "true":
		*b = true
	case "false", "null":
		*b = false
	default:
		return fmt.Errorf("email_verified: %s is not a boolean", data)
	}
	return nil
}

// Verify checks an ID token: signed by one of the provider's published keys with an asymmetric algorithm,
// issued by the provider, for this client, unexpired, and, when nonce is not empty, carrying that nonce.
func (p *Provider) Verify(ctx context.Context, rawToken, nonce string) (Identity, error) {
	tok, err := jwt.ParseSigned(rawToken, signatureAlgorithms)
	if err != nil || len(tok.Headers) != 1 {
		return Identity{}, fmt.Errorf("%w: not a signed JWT", ErrRejected)
	}
	keys, err := p.verificationKeys(ctx, tok.Headers[0].KeyID)
	if err != nil {
		return Identity{}, err
	}
	var c idClaims
	verified := false
	for _, k := range keys {
		if k.Algorithm != "" && k.Algorithm != tok.Headers[0].Algorithm {
			continue
		}
		if tok.Claims(k.Key, &c) == nil {
			verified = true
			break
		}
	}
	if !verified {
		return Identity{}, fmt.Errorf("%w: signature does not verify", ErrRejected)
	}
	if err := p.checkClaims(c, nonce); err != nil {
		return Identity{}, err
	}
	return Identity{Subject: c.Subject, Email: strings.ToLower(strings.TrimSpace(c.Email)),
		EmailVerified: bool(c.EmailVerified), GivenName: c.GivenName, FamilyName: c.FamilyName}, nil
}

func (p *Provider) checkClaims(c idClaims, nonce string) error {
	if c.Issuer != p.cfg.Issuer && !slices.Contains(p.cfg.OtherIssuers, c.Issuer) {
		return fmt.Errorf("%w: issuer %q", ErrRejected, c.Issuer)
	}
	if c.Expiry == nil {
		return fmt.Errorf("%w: no expiry", ErrRejected)
	}
	if err := c.ValidateWithLeeway(jwt.Expected{AnyAudience: jwt.Audience{p.cfg.ClientID}, Time: p.now()}, clockLeeway); err != nil {
		return fmt.Errorf("%w: %v", ErrRejected, err)
	}
	// A token for several audiences must name this client as the party it was issued to (OIDC Core 3.1.3.7).
	if len(c.Audience) > 1 && c.AuthorizedParty != p.cfg.ClientID {
		return fmt.Errorf("%w: azp %q with several audiences", ErrRejected, c.AuthorizedParty)
	}
	if c.Subject == "" || len(c.Subject) > 255 {
		return fmt.Errorf("%w: subject missing or too long", ErrRejected)
	}
	if nonce != "" && subtle.ConstantTimeCompare([]byte(c.Nonce), []byte(nonce)) != 1 {
		return fmt.Errorf("%w: nonce mismatch", ErrRejected)
	}
	return nil
}
