package handlers_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"

	"github.com/outflowhq/outflow/handlers/apitest"
)

// TestOAuthConcurrentRedemptionsOfOneCode sends six redemptions of each code at once, round after round: at
// most one gets tokens and every other is invalid_grant, never a server error, whichever step of the exchange
// the race reaches (the redemption itself, or the re-read of a code another request has just redeemed).
func TestOAuthConcurrentRedemptionsOfOneCode(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := oauthContext(env)
	pair := env.SignUp(t, "race@oauth.example")
	org := homeOrganization(t, env, pair)
	reg := registerPublicClient(t, env, "read_audit_logs")
	conf := oauthConfig(env, reg.ClientID, "", "read_audit_logs")
	browser := newOAuthBrowser(t, env, "race@oauth.example")
	for round := range 25 {
		verifier := oauth2.GenerateVerifier()
		page := browser.consent(t, conf.AuthCodeURL("state-race", oauth2.S256ChallengeOption(verifier)))
		code := browser.decide(t, page, org, "approve").Query().Get("code")
		errs := make(chan error, 6)
		for range 6 {
			go func() {
				_, err := conf.Exchange(ctx, code, oauth2.VerifierOption(verifier))
				errs <- err
			}()
		}
		succeeded := 0
		for range 6 {
			err := <-errs
			if err == nil {
				succeeded++
				continue
			}
			var re *oauth2.RetrieveError
			require.True(t, errors.As(err, &re), "round %d: %v", round, err)
			require.Equal(t, "invalid_grant", re.ErrorCode, "round %d: %v", round, err)
		}
		require.LessOrEqual(t, succeeded, 1, "round %d", round)
	}
}
