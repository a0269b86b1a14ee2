package mailoauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// ErrUnsupported means the provider exposes no send-as identities (only Gmail does).
var ErrUnsupported = errors.New("mailoauth: the provider exposes no send-as identities")

// maxSendAsAnswer bounds the settings answer read (Gmail allows 100 aliases, each with a signature of at most
// 10,000 characters).
const maxSendAsAnswer = 8 << 20

// Identity is one address the mailbox may send as, as the provider reports it.
type Identity struct {
	Email     string
	Name      string
	Primary   bool
	Default   bool
	Verified  bool
	Signature string // HTML
}

// SendAs reads the mailbox's send-as identities from Gmail's settings API with an access token.
func (p *Provider) SendAs(ctx context.Context, accessToken string) ([]Identity, error) {
	if p.Name != Google || p.apiURL == "" {
		return nil, ErrUnsupported
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.apiURL+"/gmail/v1/users/me/settings/sendAs", nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	req.Header.Set("Authorization", "Bearer "+accessToken)
	req.Header.Set("Accept", "application/json")
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: settings API: %v", ErrUnavailable, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		return nil, fmt.Errorf("%w: the settings API refused the access token", ErrRevoked)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("%w: settings API answered %d", ErrUnavailable, resp.StatusCode)
	}
	var out struct {
		SendAs []struct {
			SendAsEmail        string `json:"sendAsEmail"`
			DisplayName        string `json:"displayName"`
			Signature          string `json:"signature"`
			IsPrimary          bool   `json:"isPrimary"`
			IsDefault          bool   `json:"isDefault"`
			VerificationStatus string `json:"verificationStatus"`
		} `json:"sendAs"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxSendAsAnswer)).Decode(&out); err != nil {
		return nil, fmt.Errorf("%w: settings API answer: %v", ErrUnavailable, err)
	}
	ids := make([]Identity, 0, len(out.SendAs))
	for _, s := range out.SendAs {
		email := strings.ToLower(strings.TrimSpace(s.SendAsEmail))
		if email == "" {
			continue
		}
		// The primary address carries no verification status: it is the account itself.
		ids = append(ids, Identity{Email: email, Name: s.DisplayName, Primary: s.IsPrimary, Default: s.IsDefault,
			Verified: s.IsPrimary || s.VerificationStatus == "accepted", Signature: s.Signature})
	}
	return ids, nil
}
