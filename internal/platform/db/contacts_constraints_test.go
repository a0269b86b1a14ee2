package db_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/testkit/dbtest"
)

// TestContactsTableRefusesWhatNoWriterMayStore holds the contacts table's own limits, which back the
// handlers' validation: addresses lowercase (multi-byte letters included) and 3 to 254 characters, names
// and the other bounded fields within their length in characters, not bytes.
func TestContactsTableRefusesWhatNoWriterMayStore(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	ctx := context.Background()
	org := bootstrap(t, d, "acme").OrganizationID
	insert := func(email, first string) error {
		_, err := d.OwnerPool(t).Exec(ctx, `INSERT INTO contacts (organization_id, id, email, first_name) VALUES ($1, $2, $3, $4)`,
			org, uuid.Must(uuid.NewV7()), email, first)
		return err
	}
	code := func(err error) string {
		var pg *pgconn.PgError
		if err == nil || !errors.As(err, &pg) {
			return ""
		}
		return pg.Code
	}
	for _, ok := range []struct{ email, first string }{
		{"ada@example.com", "Ada"},
		{"é@x", ""}, // three characters, four bytes
		{"élodie@exemple.fr", strings.Repeat("é", 255)},    // 255 characters in 510 bytes
		{strings.Repeat("a", 242) + "@example.com", "Ada"}, // 254 characters
		{strings.Repeat("ü", 200) + "@example.com", "Ü"},   // 212 characters in 412 bytes
	} {
		require.NoError(t, insert(ok.email, ok.first), ok.email)
	}
	for _, bad := range []struct{ email, first, code string }{
		{"Ada@example.com", "", "23514"},                         // ASCII capital
		{"Élodie@exemple.fr", "", "23514"},                       // multi-byte capital
		{"a@", "", "23514"},                                      // two characters
		{"é@", "", "23514"},                                      // two characters in three bytes
		{strings.Repeat("a", 243) + "@example.com", "", "22001"}, // 255 characters
		{"bob@example.com", strings.Repeat("é", 256), "22001"},   // 256 characters
		{"eve@example.com", strings.Repeat("a", 256), "22001"},   // 256 bytes
	} {
		require.Equal(t, bad.code, code(insert(bad.email, bad.first)), bad.email)
	}
}
