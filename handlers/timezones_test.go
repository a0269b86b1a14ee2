package handlers_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
)

func TestTimezonesListsIANAZonesToAnyCredential(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")

	// A key with no scope at all reads the list: it is reference data.
	zones, err := env.Client(t, scopedKey(t, env, boot.OrganizationID, 0)).AccountOrgTimezonesList(ctx)
	require.NoError(t, err)
	require.Len(t, zones, 419)
	require.Equal(t, api.TimezoneOption{Name: "UTC", DisplayName: "UTC"}, zones[0])
	byName := map[string]string{}
	for _, z := range zones {
		byName[z.Name] = z.DisplayName
	}
	require.Equal(t, "(UTC+05:30) Asia/Kolkata", byName["Asia/Kolkata"])
	require.Regexp(t, `^\(UTC-0[45]:00\) America/New York$`, byName["America/New_York"])
	require.Contains(t, byName, "Europe/Amsterdam")

	// A signed-in person gets the same list; no credential is a 401.
	mine, err := env.Client(t, env.SignIn(t, "owner@acme.example", apitest.Password).AccessToken).AccountOrgTimezonesList(ctx)
	require.NoError(t, err)
	require.Equal(t, zones, mine)
	resp := env.Do(t, "GET", "/v1/timezones", "", nil, nil)
	require.Equal(t, 401, resp.StatusCode)
}
