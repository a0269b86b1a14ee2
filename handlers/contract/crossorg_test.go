package contract_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
)

// tenantDigest fingerprints every row of every table that carries organization_id for org, read as the schema
// owner (no row-level security), so any change another tenant manages to make shows.
func tenantDigest(t *testing.T, env *apitest.Env, org uuid.UUID) map[string]string {
	t.Helper()
	ctx := context.Background()
	owner := env.DB.OwnerPool(t)
	rows, err := owner.Query(ctx, `SELECT c.table_name FROM information_schema.columns c
		JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
		WHERE c.table_schema = 'public' AND c.column_name = 'organization_id' AND t.table_type = 'BASE TABLE'
		ORDER BY c.table_name`)
	require.NoError(t, err)
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.NotEmpty(t, tables)
	out := map[string]string{}
	for _, table := range tables {
		var digest string
		q := fmt.Sprintf(`SELECT COALESCE(md5(string_agg(x::text, '|' ORDER BY x::text)), '') FROM %s x WHERE organization_id = $1`,
			pgx.Identifier{table}.Sanitize())
		require.NoError(t, owner.QueryRow(ctx, q, org).Scan(&digest))
		out[table] = digest
	}
	var org1 string
	require.NoError(t, owner.QueryRow(ctx, `SELECT o::text FROM organizations o WHERE id = $1`, org).Scan(&org1))
	out["organizations"] = org1
	return out
}

// TestCrossOrganizationProbe calls every operation of the SDK that takes an id, as another organization's
// owner (session) and full-access API key, with each id of the victim organization in turn. Nothing may
// succeed on a victim id, no answer may carry the victim's data, and the victim's rows must be untouched.
func TestCrossOrganizationProbe(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()

	victim := env.Bootstrap(t, "acme")
	vKey := env.Client(t, victim.APIKey)
	vSession := env.Client(t, env.SignIn(t, "owner@acme.example", apitest.Password).AccessToken)
	secretName := "acme-confidential-" + uuid.NewString()[:8]
	ids := []uuid.UUID{victim.OrganizationID, victim.UserID, victim.APIKeyID}
	team, err := vKey.OrganizationsCreateTeam(ctx, &api.TeamCreate{Name: secretName}, api.OrganizationsCreateTeamParams{})
	require.NoError(t, err)
	ids = append(ids, team.ID)
	role, err := vSession.OrganizationsCreateRole(ctx, &api.CustomRoleCreate{Name: secretName,
		Permissions: []api.OrganizationPermission{api.OrganizationPermissionViewContacts}}, api.OrganizationsCreateRoleParams{})
	require.NoError(t, err)
	ids = append(ids, role.ID)
	inv, err := vSession.OrganizationsCreateInvitation(ctx, &api.OrganizationInvitationCreate{Email: "invitee@acme.example"},
		api.OrganizationsCreateInvitationParams{})
	require.NoError(t, err)
	ids = append(ids, inv.ID)
	key, err := vKey.APIKeysCreate(ctx, &api.CreateAPIKey{Name: secretName, Permissions: 1}, api.APIKeysCreateParams{})
	require.NoError(t, err)
	ids = append(ids, key.ID)
	app, err := vSession.OAuthApplicationsCreate(ctx, &api.OAuthApplicationCreate{Name: secretName,
		RedirectUris: []string{"https://app.acme.example/callback"}, Scopes: []api.OAuthScope{api.OAuthScopeReadContacts},
		AllowedWebhookDomains: []string{}, WebhookEvents: []api.WebhookEventType{}}, api.OAuthApplicationsCreateParams{})
	require.NoError(t, err)
	ids = append(ids, app.ID)
	// The detector works: the victim's own view of its key carries the marks the probe looks for.
	own, err := vKey.APIKeysGet(ctx, api.APIKeysGetParams{ID: key.ID})
	require.NoError(t, err)
	ownJSON, _ := json.Marshal(own)
	require.Contains(t, string(ownJSON), secretName)
	require.Contains(t, string(ownJSON), key.KeyPrefix)

	require.NoError(t, env.Usage.Flush(ctx)) // the victim's own requests are logged before the snapshot
	before := tenantDigest(t, env, victim.OrganizationID)

	attacker := env.Bootstrap(t, "globex")
	probes := map[string]*api.Client{
		"api key": env.Client(t, attacker.APIKey),
		"session": env.Client(t, env.SignIn(t, "owner@globex.example", apitest.Password).AccessToken),
	}
	forbidden := []string{secretName, "acme", key.KeyPrefix}
	for _, id := range ids {
		forbidden = append(forbidden, id.String())
	}

	probed := 0
	for who, client := range probes {
		for _, m := range apitest.SDKMethods(client) {
			if !takesID(m.Type) {
				continue
			}
			for _, victimID := range ids {
				out := apitest.Filler{IDs: func() uuid.UUID { return victimID }}.Call(ctx, client, m)
				probed++
				err, _ := out[len(out)-1].Interface().(error)
				var answer []byte
				if err == nil {
					answer, _ = json.Marshal(out[0].Interface())
				} else {
					var se *api.ErrorStatusCode
					if errors.As(err, &se) {
						answer = []byte(se.Response.Message)
						require.NotEqual(t, 500, se.StatusCode, "%s as %s: %s", m.Name, who, se.Response.Message)
					} else {
						answer = []byte(err.Error())
					}
				}
				// The id the probe sent may come back (an error naming it, a record of the attacker's own that
				// refers to it); anything else of the victim's may not.
				for _, secret := range forbidden {
					if secret != victimID.String() {
						require.NotContains(t, string(answer), secret, "%s as %s with %s leaks victim data", m.Name, who, victimID)
					}
				}
			}
		}
	}
	require.NoError(t, env.Usage.Flush(ctx))
	require.Equal(t, before, tenantDigest(t, env, victim.OrganizationID), "the victim organization's rows changed")
	t.Logf("%d probes", probed)
}

// takesID reports whether an SDK method's parameters or body carry a uuid or an id string.
func takesID(mt reflect.Type) bool {
	for j := 2; j < mt.NumIn(); j++ {
		if hasID(mt.In(j), 0) {
			return true
		}
	}
	return false
}

func hasID(t reflect.Type, depth int) bool {
	if depth > 6 {
		return false
	}
	switch {
	case t == reflect.TypeOf(uuid.UUID{}):
		return true
	case t.Kind() == reflect.Pointer, t.Kind() == reflect.Slice:
		return hasID(t.Elem(), depth+1)
	case t.Kind() == reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			if f.Type.Kind() == reflect.String && (f.Name == "ID" || strings.HasSuffix(f.Name, "ID")) {
				return true
			}
			if hasID(f.Type, depth+1) {
				return true
			}
		}
	}
	return false
}
