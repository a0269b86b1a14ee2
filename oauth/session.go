package oauth

import (
	"maps"
	"time"

	"github.com/google/uuid"
	"github.com/ory/fosite"
)

// Session is what fosite carries from the consent to every token of a grant: whose grant it is and when each
// token expires.
type Session struct {
	GrantID        uuid.UUID                      `json:"grant_id"`
	OrganizationID uuid.UUID                      `json:"organization_id"`
	UserID         uuid.UUID                      `json:"user_id"`
	ExpiresAt      map[fosite.TokenType]time.Time `json:"expires_at"`
}

var _ fosite.Session = (*Session)(nil)

// SetExpiresAt records when the token of kind key expires.
func (s *Session) SetExpiresAt(key fosite.TokenType, exp time.Time) {
	if s.ExpiresAt == nil {
		s.ExpiresAt = map[fosite.TokenType]time.Time{}
	}
	s.ExpiresAt[key] = exp
}

// GetExpiresAt returns when the token of kind key expires (zero when unset).
func (s *Session) GetExpiresAt(key fosite.TokenType) time.Time {
	return s.ExpiresAt[key]
}

// GetUsername is empty: fosite only shows it in introspection, which this server does not offer.
func (s *Session) GetUsername() string { return "" }

// GetSubject is the person who approved the grant.
func (s *Session) GetSubject() string { return s.UserID.String() }

// Clone returns an independent copy.
func (s *Session) Clone() fosite.Session {
	if s == nil {
		return nil
	}
	c := *s
	c.ExpiresAt = maps.Clone(s.ExpiresAt)
	return &c
}
