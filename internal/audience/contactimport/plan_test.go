package contactimport

import (
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/audience/contactfile"
	"github.com/outflowhq/outflow/internal/audience/contacts"
)

func cols(targets ...contactfile.Target) []contactfile.Column {
	out := make([]contactfile.Column, len(targets))
	for i, t := range targets {
		out[i] = contactfile.Column{Index: i, Target: t}
	}
	return out
}

// TestPlanStagesOnlyWhatTheMappingNames pins the staging table and COPY of an address-only file: id,
// created_at and email, and a new contact takes subscribed_default.
func TestPlanStagesOnlyWhatTheMappingNames(t *testing.T) {
	t.Parallel()
	p := newPlan(cols(contactfile.TargetEmail, contactfile.TargetIgnore))
	require.Equal(t, []string{"id", "created_at", "email"}, p.columns)
	require.Equal(t, "CREATE TEMP TABLE contact_import_rows (id uuid NOT NULL, created_at timestamptz NOT NULL, email text NOT NULL) ON COMMIT DROP", p.createSQL())
	require.Equal(t, "COPY contact_import_rows (id, created_at, email) FROM STDIN (FORMAT binary)", p.copySQL())
	require.Equal(t, "INSERT INTO contacts (organization_id, id, email, duplicate_seq, source, search_ready, created_at, updated_at, subscribed)\n"+
		"SELECT $1, s.id, s.email, 0, 'import', false, s.created_at, s.created_at, $2::boolean\nFROM contact_import_rows s", p.insertSQL("0", false))
	require.True(t, strings.HasSuffix(p.insertSQL(importDuplicateSeq, true), "\nON CONFLICT (organization_id, email, duplicate_seq) DO NOTHING"))
	require.Contains(t, p.insertSQL(importDuplicateSeq, true), "nextval('contact_duplicate_seq')")
}

// TestPlanOrdersFieldsByTheirStagingOrder shows that mapped fields are staged in one fixed order whatever
// the file's column order, that a subscribed column replaces the default, and that an update sets only the
// mapped fields.
func TestPlanOrdersFieldsByTheirStagingOrder(t *testing.T) {
	t.Parallel()
	p := newPlan(cols(contactfile.TargetCustom, contactfile.TargetSubscribed, contactfile.TargetEmail, contactfile.TargetFirstName))
	require.Equal(t, []string{"id", "created_at", "email", "first_name", "custom_fields", "subscribed"}, p.columns)
	require.Contains(t, p.createSQL(), "email text NOT NULL, first_name text NOT NULL, custom_fields jsonb, subscribed boolean)")
	insert := p.insertSQL("0", true)
	require.NotContains(t, insert, "$2::boolean")
	require.Contains(t, insert, "coalesce(s.subscribed, $2)")
	require.Contains(t, insert, "coalesce(s.custom_fields, '{}')")
	update := p.updateSQL()
	require.Contains(t, update, "first_name = CASE WHEN s.first_name = '' THEN c.first_name ELSE s.first_name END")
	require.Contains(t, update, "custom_fields = c.custom_fields || coalesce(s.custom_fields, '{}')")
	require.NotContains(t, update, "last_name")
	require.NotContains(t, update, "verification_status")
	require.True(t, strings.HasPrefix(update, "WITH u AS (UPDATE contacts c SET search_ready = false, updated_at = now(), "))
	require.True(t, p.staged(contactfile.TargetSubscribed))
	require.False(t, p.staged(contactfile.TargetCategories))
}

// TestStageEncodesARowInCopyBinaryFormat decodes one staged row field by field: the field count, then each
// field's length and send form, a NULL as length -1.
func TestStageEncodesARowInCopyBinaryFormat(t *testing.T) {
	t.Parallel()
	at := time.Date(2000, 1, 1, 0, 0, 1, 0, time.UTC)
	s := &source{plan: newPlan(cols(contactfile.TargetEmail, contactfile.TargetFirstName, contactfile.TargetSubscribed)), at: at,
		ids: contacts.NewIDs()}
	b, err := s.stage(nil, contactfile.Contact{Email: "a@example.com", FirstName: "Ann"})
	require.NoError(t, err)
	require.Equal(t, 1, s.staged)

	require.Equal(t, uint16(5), binary.BigEndian.Uint16(b))
	b = b[2:]
	field := func() []byte {
		n := int32(binary.BigEndian.Uint32(b))
		b = b[4:]
		if n < 0 {
			return nil
		}
		v := b[:n]
		b = b[n:]
		return v
	}
	id := field()
	require.Equal(t, s.lo[:], id, "the staged ids are bounded for contact_index_pending")
	require.Equal(t, s.hi[:], id)
	require.Len(t, field(), 8) // created_at
	require.Equal(t, "a@example.com", string(field()))
	require.Equal(t, "Ann", string(field()))
	require.Nil(t, field(), "a row that does not say is NULL, so the contact keeps or defaults its subscription")
	require.Empty(t, b)

	// timestamptz's send form counts microseconds from 2000-01-01 UTC.
	require.Equal(t, uint64(time.Second/time.Microsecond), binary.BigEndian.Uint64(copyTime(nil, at)[4:]))
}
