package contactimport

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/outflowhq/outflow/internal/audience/contactfile"
)

// stagedField is the staging columns one mapping target fills, with what a new contact and an updated one
// take from them. An import stages only the fields its mapping names, so COPY and the set-based writes move
// no more than the file brings (a column costs about 10 ms per 50,000 rows in COPY alone).
type stagedField struct {
	target contactfile.Target
	// columns are the staging columns with their types, in COPY order.
	columns []string
	// encode appends a row's values for columns in COPY's binary format.
	encode func(b []byte, c contactfile.Contact, at time.Time) []byte
	// insert pairs contacts columns with the expressions a new row takes from the staging row s.
	insert [][2]string
	// update are the SET clauses an existing contact c gets from s: sent values replace, empty ones keep.
	update []string
}

// textField stages one text column that replaces the stored value when the cell is not empty.
func textField(target contactfile.Target, column string, value func(c contactfile.Contact) string) stagedField {
	return stagedField{target: target, columns: []string{column + " text NOT NULL"},
		encode: func(b []byte, c contactfile.Contact, _ time.Time) []byte { return copyText(b, value(c)) },
		insert: [][2]string{{column, "s." + column}},
		update: []string{fmt.Sprintf("%[1]s = CASE WHEN s.%[1]s = '' THEN c.%[1]s ELSE s.%[1]s END", column)}}
}

var stagedFields = []stagedField{
	textField(contactfile.TargetFirstName, "first_name", func(c contactfile.Contact) string { return c.FirstName }),
	textField(contactfile.TargetLastName, "last_name", func(c contactfile.Contact) string { return c.LastName }),
	textField(contactfile.TargetCompany, "company", func(c contactfile.Contact) string { return c.Company }),
	textField(contactfile.TargetPhone, "phone", func(c contactfile.Contact) string { return c.Phone }),
	{
		// NULL when the row has no custom cell; custom fields merge key by key.
		target:  contactfile.TargetCustom,
		columns: []string{"custom_fields jsonb"},
		encode: func(b []byte, c contactfile.Contact, _ time.Time) []byte {
			if len(c.Custom) == 0 {
				return copyNull(b)
			}
			doc, _ := json.Marshal(c.Custom) // a map of strings always encodes
			return copyJSONB(b, doc)
		},
		insert: [][2]string{{"custom_fields", "coalesce(s.custom_fields, '{}')"}},
		update: []string{"custom_fields = c.custom_fields || coalesce(s.custom_fields, '{}')"},
	},
	{
		// NULL when the row does not say: a new contact takes subscribed_default ($2), an existing one keeps
		// its subscription (a blank cell never resubscribes anyone).
		target:  contactfile.TargetSubscribed,
		columns: []string{"subscribed boolean"},
		encode: func(b []byte, c contactfile.Contact, _ time.Time) []byte {
			if c.Subscribed == nil {
				return copyNull(b)
			}
			return copyBool(b, *c.Subscribed)
		},
		insert: [][2]string{{"subscribed", "coalesce(s.subscribed, $2)"}},
		update: []string{"subscribed = coalesce(s.subscribed, c.subscribed)"},
	},
	{
		// Lowercased category names, linked after the contacts are written.
		target:  contactfile.TargetCategories,
		columns: []string{"categories text[]"},
		encode: func(b []byte, c contactfile.Contact, _ time.Time) []byte {
			if len(c.Categories) == 0 {
				return copyNull(b)
			}
			return copyTextArray(b, c.Categories)
		},
	},
	{
		// verification_status is NULL when the row carries no recognised verdict; a recognised one is stored as
		// imported (the background check leaves it alone) and replaces what an existing contact had.
		target: contactfile.TargetVerificationStatus,
		columns: []string{"verification_status text", "verification_sub_status text", "verification_provider text",
			"verification_checked_at timestamptz"},
		encode: func(b []byte, c contactfile.Contact, at time.Time) []byte {
			if !c.Verified {
				return copyNull(copyNull(copyNull(copyNull(b))))
			}
			return copyTime(copyText(copyText(copyText(b, string(c.Verdict.Status)), c.Verdict.SubStatus), c.Provider), at)
		},
		insert: [][2]string{
			{"verification_status", "coalesce(s.verification_status, 'unknown')"},
			{"verification_sub_status", "coalesce(s.verification_sub_status, '')"},
			{"verification_source", "CASE WHEN s.verification_status IS NULL THEN '' ELSE 'imported' END"},
			{"verification_provider", "coalesce(s.verification_provider, '')"},
			{"verification_checked_at", "s.verification_checked_at"},
			{"is_catch_all", "coalesce(s.verification_sub_status = 'catch_all', false)"},
		},
		update: []string{
			"verification_status = coalesce(s.verification_status, c.verification_status)",
			"verification_sub_status = CASE WHEN s.verification_status IS NULL THEN c.verification_sub_status ELSE s.verification_sub_status END",
			"verification_source = CASE WHEN s.verification_status IS NULL THEN c.verification_source ELSE 'imported' END",
			"verification_provider = CASE WHEN s.verification_status IS NULL THEN c.verification_provider ELSE s.verification_provider END",
			"verification_checked_at = CASE WHEN s.verification_status IS NULL THEN c.verification_checked_at ELSE s.verification_checked_at END",
			"verification_reason = CASE WHEN s.verification_status IS NULL THEN c.verification_reason ELSE '' END",
			"verification_confidence = CASE WHEN s.verification_status IS NULL THEN c.verification_confidence ELSE 0 END",
			"is_catch_all = CASE WHEN s.verification_status IS NULL THEN c.is_catch_all ELSE s.verification_sub_status = 'catch_all' END",
		},
	},
}

// plan is the SQL of one import, built from its mapping out of the constant pieces above: a temporary
// staging table (contact_import_rows, dropped with the transaction) with id, created_at and email plus the
// mapped fields, and the statements that write contacts from it.
type plan struct {
	fields []stagedField
	// columns are the staging columns in COPY order.
	columns []string
}

func newPlan(columns []contactfile.Column) plan {
	mapped := map[contactfile.Target]bool{}
	for _, c := range columns {
		mapped[c.Target] = true
	}
	p := plan{columns: []string{"id", "created_at", "email"}}
	for _, f := range stagedFields {
		if mapped[f.target] {
			p.fields = append(p.fields, f)
			for _, c := range f.columns {
				p.columns = append(p.columns, strings.Fields(c)[0])
			}
		}
	}
	return p
}

func (p plan) staged(t contactfile.Target) bool {
	return slices.ContainsFunc(p.fields, func(f stagedField) bool { return f.target == t })
}

// workMemSQL lets an import's statements hold its rows in memory: the counters' trigger keeps the
// insert's new rows in a transition table, which at the default work_mem spills 50,000 of them to a
// temporary file. It ends with the transaction.
const workMemSQL = "SET LOCAL work_mem = '32MB'"

// copySQL loads the staging table from a binary COPY stream.
func (p plan) copySQL() string {
	return "COPY contact_import_rows (" + strings.Join(p.columns, ", ") + ") FROM STDIN (FORMAT binary)"
}

// createSQL creates the staging table.
func (p plan) createSQL() string {
	defs := []string{"id uuid NOT NULL", "created_at timestamptz NOT NULL", "email text NOT NULL"}
	for _, f := range p.fields {
		defs = append(defs, f.columns...)
	}
	return "CREATE TEMP TABLE contact_import_rows (" + strings.Join(defs, ", ") + ") ON COMMIT DROP"
}

// insertSQL writes the staged rows as new contacts ($1 organization, $2 subscribed_default), search_ready
// false so they skip the search indexes until the index job runs. dupSeq is a row's duplicate_seq: 0, or
// importDuplicateSeq when dedup is create_duplicate. With skipTaken, a row whose address is taken (an
// existing contact with dedup skip or update, or one another writer committed meanwhile) is left out;
// without, it fails the statement.
func (p plan) insertSQL(dupSeq string, skipTaken bool) string {
	cols := []string{"organization_id", "id", "email", "duplicate_seq", "source", "search_ready", "created_at", "updated_at"}
	exprs := []string{"$1", "s.id", "s.email", dupSeq, "'import'", "false", "s.created_at", "s.created_at"}
	if !p.staged(contactfile.TargetSubscribed) {
		cols, exprs = append(cols, "subscribed"), append(exprs, "$2::boolean")
	}
	for _, f := range p.fields {
		for _, ins := range f.insert {
			cols, exprs = append(cols, ins[0]), append(exprs, ins[1])
		}
	}
	q := "INSERT INTO contacts (" + strings.Join(cols, ", ") + ")\nSELECT " + strings.Join(exprs, ", ") + "\nFROM contact_import_rows s"
	if skipTaken {
		q += "\nON CONFLICT (organization_id, email, duplicate_seq) DO NOTHING"
	}
	return q
}

// updateSQL enriches the organization's primary contacts of the staged addresses ($1 organization) with the
// mapped fields; the rows leave the search indexes until the index job puts them back, each recorded in
// contact_index_pending as a range of its own id (the statement's row count is the updated contacts').
func (p plan) updateSQL() string {
	sets := []string{"search_ready = false", "updated_at = now()"}
	for _, f := range p.fields {
		sets = append(sets, f.update...)
	}
	return "WITH u AS (UPDATE contacts c SET " + strings.Join(sets, ", ") +
		"\nFROM contact_import_rows s\nWHERE c.organization_id = $1 AND c.email = s.email AND c.duplicate_seq = 0\nRETURNING c.id)" +
		"\nINSERT INTO contact_index_pending (organization_id, lo, hi) SELECT $1, id, id FROM u"
}

// importDuplicateSeq gives an address the organization already has a new duplicate_seq.
const importDuplicateSeq = `CASE WHEN EXISTS (SELECT 1 FROM contacts c
  WHERE c.organization_id = $1 AND c.email = s.email AND c.duplicate_seq = 0) THEN nextval('contact_duplicate_seq') ELSE 0 END`

// importTargetsSQL holds the contacts the links apply to: every staged row's contact, whether imported,
// updated or skipped because the address exists, with the category names the row brought.
const importTargetsSQL = `CREATE TEMP TABLE contact_import_targets (contact_id uuid NOT NULL, categories text[]) ON COMMIT DROP`

// importTargetsFillSQL fills it ($1 organization); the first %s is the categories (NULL when the mapping has
// no categories column), the second joins a staged row to its contact (importTargetByAddress or ByID).
const importTargetsFillSQL = `INSERT INTO contact_import_targets (contact_id, categories)
SELECT c.id, %s FROM contact_import_rows s JOIN contacts c ON c.organization_id = $1 AND %s`

// importExistingSQL reads the primary contacts of the staged addresses ($1 organization), each once: the
// contacts a skip or update import changes or links.
const importExistingSQL = `SELECT DISTINCT c.id FROM contact_import_rows s JOIN contacts c ON c.organization_id = $1 AND ` + importTargetByAddress

// importTargetIDsSQL reads the targets' contacts, each once.
const importTargetIDsSQL = `SELECT DISTINCT contact_id FROM contact_import_targets`

const (
	importTargetByAddress = `c.email = s.email AND c.duplicate_seq = 0`
	importTargetByID      = `c.id = s.id`
)

// The link statements ($1 organization, $2 the ids to link every target to).
const (
	importCategoryLinksSQL = `INSERT INTO contact_categories (organization_id, contact_id, category_id)
SELECT $1, t.contact_id, x.id FROM contact_import_targets t CROSS JOIN unnest($2::uuid[]) AS x(id)
ON CONFLICT DO NOTHING`
	// importNamedCategoryLinksSQL links each target to the categories its row names ($2 lowercased names,
	// $3 their category ids).
	importNamedCategoryLinksSQL = `INSERT INTO contact_categories (organization_id, contact_id, category_id)
SELECT $1, t.contact_id, m.id
FROM contact_import_targets t
CROSS JOIN LATERAL unnest(t.categories) AS n(key)
JOIN unnest($2::text[], $3::uuid[]) AS m(key, id) ON m.key = n.key
ON CONFLICT DO NOTHING`
	importCampaignLinksSQL = `INSERT INTO campaign_leads (organization_id, campaign_id, contact_id)
SELECT $1, x.id, t.contact_id FROM contact_import_targets t CROSS JOIN unnest($2::uuid[]) AS x(id)
ON CONFLICT DO NOTHING`
	// importSegmentPinsSQL pins every target into the segments as a manual include (an exclude pin turns
	// into an include); every target counts as pinned.
	importSegmentPinsSQL = `INSERT INTO segment_pins (organization_id, segment_id, contact_id, include)
SELECT $1, x.id, t.contact_id, true FROM contact_import_targets t CROSS JOIN unnest($2::uuid[]) AS x(id)
ON CONFLICT (organization_id, segment_id, contact_id) DO UPDATE SET include = true`
)
