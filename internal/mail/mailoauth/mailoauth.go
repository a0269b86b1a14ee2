package mailoauth

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"golang.org/x/oauth2"

	"github.com/outflowhq/outflow/internal/platform/config"
)

// Provider names, as mailboxes store them.
const (
	Google    = "gmail"
	Microsoft = "outlook"
)

// ErrRevoked means the provider no longer honours the grant (revoked by the person, expired, password
// changed): the mailbox needs a new consent.
var ErrRevoked = errors.New("mailoauth: grant revoked")

// ErrRejected means an answer does not prove a mailbox: a refused code, or no address in the ID token.
var ErrRejected = errors.New("mailoauth: consent not accepted")

// ErrUnavailable means the provider could not be asked or answered nonsense.
var ErrUnavailable = errors.New("mailoauth: provider unavailable")

// Scopes each provider is asked for: full mail access over IMAP and SMTP (Google's one scope covers both and
// the settings API), plus the OpenID scopes that put the address in the ID token.
var scopes = map[string][]string{
	Google: {"openid", "email", "profile", "https://mail.google.com/"},
	Microsoft: {"openid", "email", "profile", "offline_access",
		"https://outlook.office.com/IMAP.AccessAsUser.All", "https://outlook.office.com/SMTP.Send"},
}

// Endpoint is a provider mail server.
type Endpoint struct {
	Host string
	Port int
}

// Provider is one configured mail provider; safe for concurrent use.
type Provider struct {
	// Name is gmail or outlook.
	Name string
	// SMTP and IMAP are the provider's mail servers.
	SMTP, IMAP Endpoint

	oauth  oauth2.Config
	apiURL string
	client *http.Client
}

// Providers are the configured providers by name; a disabled provider is absent.
type Providers map[string]*Provider

// New configures the enabled providers. redirectURL is the consent callback this deployment serves; client
// makes every provider call.
func New(google, microsoft config.MailboxOAuthConfig, redirectURL string, client *http.Client) (Providers, error) {
	out := Providers{}
	for name, c := range map[string]config.MailboxOAuthConfig{Google: google, Microsoft: microsoft} {
		if !c.Enabled() {
			continue
		}
		smtp, err := endpoint(c.SMTP)
		if err != nil {
			return nil, fmt.Errorf("mailoauth: %s smtp: %w", name, err)
		}
		imap, err := endpoint(c.IMAP)
		if err != nil {
			return nil, fmt.Errorf("mailoauth: %s imap: %w", name, err)
		}
		out[name] = &Provider{Name: name, SMTP: smtp, IMAP: imap, apiURL: c.APIURL, client: client,
			oauth: oauth2.Config{ClientID: c.ClientID, ClientSecret: c.ClientSecret, RedirectURL: redirectURL,
				Scopes: scopes[name], Endpoint: oauth2.Endpoint{AuthURL: c.AuthURL, TokenURL: c.TokenURL,
					// Both providers take the client credentials in the form body.
					AuthStyle: oauth2.AuthStyleInParams}}}
	}
	return out, nil
}

func endpoint(hostport string) (Endpoint, error) {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return Endpoint{}, err
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return Endpoint{}, fmt.Errorf("bad port %q", port)
	}
	return Endpoint{Host: host, Port: n}, nil
}

// AuthCodeURL is the consent URL for one session: state ties the answer to it, challenge is the S256 PKCE
// challenge of its verifier. Offline access and a forced consent screen make Google issue a refresh token
// even to a person who consented before.
func (p *Provider) AuthCodeURL(state, challenge string) string {
	opts := []oauth2.AuthCodeOption{oauth2.SetAuthURLParam("code_challenge", challenge),
		oauth2.SetAuthURLParam("code_challenge_method", "S256"), oauth2.SetAuthURLParam("nonce", state)}
	if p.Name == Google {
		opts = append(opts, oauth2.AccessTypeOffline, oauth2.SetAuthURLParam("prompt", "consent"))
	}
	return p.oauth.AuthCodeURL(state, opts...)
}

// Grant is what a consent or a refresh yields.
type Grant struct {
	AccessToken string
	// RefreshToken is empty when a refresh kept the old one (Google does; Microsoft rotates).
	RefreshToken string
	Expiry       time.Time
	// Email and Name identify the mailbox (from a consent's ID token; empty after a refresh).
	Email, Name string
}

// Exchange redeems a consent's code with its PKCE verifier and reads the mailbox address from the ID token.
func (p *Provider) Exchange(ctx context.Context, code, verifier string) (Grant, error) {
	if code == "" {
		return Grant{}, fmt.Errorf("%w: no authorization code", ErrRejected)
	}
	tok, err := p.oauth.Exchange(p.context(ctx), code, oauth2.VerifierOption(verifier))
	if err != nil {
		return Grant{}, tokenError(err, ErrRejected)
	}
	if tok.RefreshToken == "" {
		return Grant{}, fmt.Errorf("%w: the provider issued no refresh token", ErrRejected)
	}
	g := grantOf(tok)
	raw, _ := tok.Extra("id_token").(string)
	if g.Email, g.Name, err = p.identity(raw); err != nil {
		return Grant{}, err
	}
	return g, nil
}

// Refresh trades a refresh token for a new access token. ErrRevoked: the provider refuses the grant.
func (p *Provider) Refresh(ctx context.Context, refreshToken string) (Grant, error) {
	tok, err := p.oauth.TokenSource(p.context(ctx), &oauth2.Token{RefreshToken: refreshToken}).Token()
	if err != nil {
		return Grant{}, tokenError(err, ErrRevoked)
	}
	g := grantOf(tok)
	if g.RefreshToken == refreshToken {
		g.RefreshToken = ""
	}
	return g, nil
}

func (p *Provider) context(ctx context.Context) context.Context {
	return context.WithValue(ctx, oauth2.HTTPClient, p.client)
}

func grantOf(tok *oauth2.Token) Grant {
	expiry := tok.Expiry
	if expiry.IsZero() {
		// A token answer without expires_in: assume the providers' usual hour.
		expiry = time.Now().Add(time.Hour)
	}
	return Grant{AccessToken: tok.AccessToken, RefreshToken: tok.RefreshToken, Expiry: expiry}
}

// tokenError sorts a token endpoint failure: invalid_grant (and a refused client) is refused, the rest is
// unavailability.
func tokenError(err error, refused error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		status := 0
		if re.Response != nil {
			status = re.Response.StatusCode
		}
		if re.ErrorCode == "invalid_grant" || re.ErrorCode == "unauthorized_client" || status == http.StatusBadRequest {
			return fmt.Errorf("%w: %s %s", refused, re.ErrorCode, re.ErrorDescription)
		}
		return fmt.Errorf("%w: token endpoint answered %d %s", ErrUnavailable, status, re.ErrorCode)
	}
	return fmt.Errorf("%w: %v", ErrUnavailable, err)
}

// idTokenAlgorithms are the signature algorithms an ID token may name (it is not verified, see the package
// comment, but a token naming none or HMAC is no provider's).
var idTokenAlgorithms = []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.ES256, jose.ES384}

// identity reads the mailbox address from an ID token: email, or preferred_username for Microsoft accounts
// whose email claim is absent.
func (p *Provider) identity(raw string) (email, name string, err error) {
	if raw == "" {
		return "", "", fmt.Errorf("%w: the token answer has no id_token", ErrRejected)
	}
	tok, err := jwt.ParseSigned(raw, idTokenAlgorithms)
	if err != nil {
		return "", "", fmt.Errorf("%w: id_token: %v", ErrRejected, err)
	}
	var c struct {
		jwt.Claims
		Email             string `json:"email"`
		PreferredUsername string `json:"preferred_username"`
		Name              string `json:"name"`
	}
	if err := tok.UnsafeClaimsWithoutVerification(&c); err != nil {
		return "", "", fmt.Errorf("%w: id_token claims: %v", ErrRejected, err)
	}
	if !slices.Contains([]string(c.Audience), p.oauth.ClientID) {
		return "", "", fmt.Errorf("%w: id_token issued for another client", ErrRejected)
	}
	email = strings.ToLower(strings.TrimSpace(c.Email))
	if email == "" && strings.Contains(c.PreferredUsername, "@") {
		email = strings.ToLower(strings.TrimSpace(c.PreferredUsername))
	}
	if email == "" {
		return "", "", fmt.Errorf("%w: the provider named no address", ErrRejected)
	}
	return email, strings.TrimSpace(c.Name), nil
}
