package oauth

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/reqctx"
)

// RegistrationLimit is how many clients one source address may register per hour.
var RegistrationLimit = auth.Limit{Max: 20, Window: time.Hour}

// Registration is an RFC 7591 client registration request.
type Registration struct {
	ClientName              string
	RedirectURIs            []string
	GrantTypes              []string
	ResponseTypes           []string
	TokenEndpointAuthMethod string
	// Scope is the space-separated scopes asked for; nil registers every scope a self-registered client may hold.
	Scope           *string
	LogoURI         string
	ClientURI       string
	PolicyURI       string
	TosURI          string
	Contacts        []string
	SoftwareID      string
	SoftwareVersion string
}

// Registered is a registered client; Secret is set only for a confidential client, and only here.
type Registered struct {
	Client *Client
	Secret string
}

func metadataError(description string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: "invalid_client_metadata", Description: description}
}

// Register registers a client dynamically (RFC 7591), within the per-source-address limit. The client belongs
// to no organization and gets no access by itself: a person must still approve it on the consent page. It may
// never hold send_campaigns or api_keys. Every client gets both grants, so the token response always carries
// a refresh token; the answer reports the metadata as registered.
func (p *Provider) Register(ctx context.Context, r Registration) (*Registered, error) {
	if err := p.limiter.Allow(ctx, "oauth_register:ip:"+reqctx.From(ctx).ClientIP, RegistrationLimit); err != nil {
		return nil, err
	}
	if err := ValidateRedirectURIs(r.RedirectURIs, true); err != nil {
		return nil, &Error{Status: http.StatusBadRequest, Code: "invalid_redirect_uri", Description: err.Error() + "."}
	}
	for _, gt := range r.GrantTypes {
		if gt != GrantAuthorizationCode && gt != GrantRefreshToken {
			return nil, metadataError("grant_types may only hold authorization_code and refresh_token.")
		}
	}
	if len(r.GrantTypes) > 0 && !slices.Contains(r.GrantTypes, GrantAuthorizationCode) {
		return nil, metadataError("grant_types must include authorization_code.")
	}
	for _, rt := range r.ResponseTypes {
		if rt != "code" {
			return nil, metadataError("response_types may only hold code.")
		}
	}
	method := r.TokenEndpointAuthMethod
	if method == "" {
		method = AuthMethodNone
	}
	clientType := ClientConfidential
	switch method {
	case AuthMethodNone:
		clientType = ClientPublic
	case AuthMethodBasic, AuthMethodPost:
	default:
		return nil, metadataError("token_endpoint_auth_method must be none, client_secret_basic or client_secret_post.")
	}
	scopes := auth.FullAccess &^ SelfRegisteredForbidden
	if r.Scope != nil {
		asked, err := ParseScope(*r.Scope)
		if err != nil {
			return nil, metadataError("scope names an " + err.Error() + ".")
		}
		if forbidden := asked & SelfRegisteredForbidden; forbidden != 0 {
			return nil, metadataError("A self-registered client can never hold " + ScopeString(forbidden) + ".")
		}
		if asked == 0 {
			return nil, metadataError("scope names no scope.")
		}
		scopes = asked
	}
	name := strings.TrimSpace(r.ClientName)
	if name == "" {
		name = "Unnamed app"
	}
	if len([]rune(name)) > 255 {
		return nil, metadataError("client_name must be at most 255 characters.")
	}
	for _, u := range []string{r.LogoURI, r.ClientURI, r.PolicyURI, r.TosURI} {
		if len(u) > maxURILength {
			return nil, metadataError("URIs must be at most 2000 characters.")
		}
	}
	if len(r.Contacts) > 20 || len(r.SoftwareID) > 255 || len(r.SoftwareVersion) > 255 {
		return nil, metadataError("contacts (at most 20), software_id and software_version (at most 255 characters) are too long.")
	}

	id, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	out := &Registered{}
	var hash []byte
	if clientType == ClientConfidential {
		if out.Secret, hash, err = NewClientSecret(); err != nil {
			return nil, err
		}
	}
	now := time.Now().UTC().Truncate(time.Second)
	row := dbq.OauthClient{
		ID: id, ClientID: NewClientID(), ClientType: clientType, TokenEndpointAuthMethod: method, SecretHash: hash,
		Name: name, Logo: r.LogoURI, Website: r.ClientURI, PolicyUri: r.PolicyURI, TosUri: r.TosURI,
		Contacts: nonNil(r.Contacts), SoftwareID: r.SoftwareID, SoftwareVersion: r.SoftwareVersion,
		RedirectUris: r.RedirectURIs, GrantTypes: []string{GrantAuthorizationCode, GrantRefreshToken},
		Scopes: int64(scopes), AllowedWebhookDomains: []string{}, WebhookEvents: []string{},
		CreatedAt: now, UpdatedAt: now,
	}
	err = p.queries.OAuthClientRegister(ctx, p.pool, dbq.OAuthClientRegisterParams{
		ID: row.ID, ClientID: row.ClientID, ClientType: row.ClientType, TokenEndpointAuthMethod: row.TokenEndpointAuthMethod,
		SecretHash: row.SecretHash, Name: row.Name, Logo: row.Logo, Website: row.Website, PolicyUri: row.PolicyUri,
		TosUri: row.TosUri, Contacts: row.Contacts, SoftwareID: row.SoftwareID, SoftwareVersion: row.SoftwareVersion,
		RedirectUris: row.RedirectUris, GrantTypes: row.GrantTypes, Scopes: row.Scopes, CreatedAt: now,
	})
	if err != nil {
		return nil, err
	}
	out.Client = &Client{OauthClient: row}
	return out, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
