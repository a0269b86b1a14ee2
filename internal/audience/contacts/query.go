package contacts

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/platform/uuidv7"
)

// Querier is what the query functions need from a transaction (a pgx.Tx from db.WithOrgTx).
type Querier interface {
	dbq.DBTX
}

// LeadStatusSQL derives a lead's status from campaign_leads l and contacts c, highest priority first:
// unsubscribed, bounced, replied, failed, completed, paused, active, undeliverable, pending.
const LeadStatusSQL = `CASE WHEN NOT c.subscribed THEN 'unsubscribed' WHEN l.bounced > 0 THEN 'bounced'
  WHEN l.replied > 0 THEN 'replied' WHEN l.state = 'failed' THEN 'failed' WHEN l.state = 'completed' THEN 'completed'
  WHEN l.state = 'paused' OR l.hold_since IS NOT NULL THEN 'paused' WHEN l.state = 'active' OR l.sent > 0 THEN 'active'
  WHEN l.state = 'undeliverable' THEN 'undeliverable' ELSE 'pending' END`

// SearchTextSQL is what a text query matches over contacts c: name, email and company, lowercased. It is
// the expression of the contacts_search index, which the planner matches only when written exactly so.
const SearchTextSQL = `lower(c.first_name || ' ' || c.last_name || ' ' || c.email || ' ' || c.company)`

// engagementSQL is each engagement filter over campaign_leads l; the not_* ones match only leads sent at least
// one step.
var engagementSQL = map[string]string{
	"opened": "l.opened > 0", "not_opened": "l.sent > 0 AND l.opened = 0",
	"clicked": "l.clicked > 0", "not_clicked": "l.sent > 0 AND l.clicked = 0",
	"replied": "l.replied > 0", "not_replied": "l.sent > 0 AND l.replied = 0",
	"bounced": "l.bounced > 0",
}

// Columns is the select list of a contact Row over alias c.
const Columns = `c.id, c.email, c.duplicate_seq, c.first_name, c.last_name, c.company, c.phone, c.custom_fields,
  c.subscribed, c.source, c.campaign_count, c.verification_status, c.verification_sub_status, c.verification_source,
  c.verification_provider, c.verification_reason, c.verification_checked_at, c.verification_confidence, c.is_catch_all,
  c.esp_provider, c.esp_resolved_at, c.last_contacted_at, c.created_at, c.updated_at`

// Row is one contact as stored.
type Row struct {
	ID                     uuid.UUID
	Email                  string
	DuplicateSeq           int64
	FirstName              string
	LastName               string
	Company                string
	Phone                  string
	CustomFields           map[string]string
	Subscribed             bool
	Source                 string
	CampaignCount          int32
	VerificationStatus     string
	VerificationSubStatus  string
	VerificationSource     string
	VerificationProvider   string
	VerificationReason     string
	VerificationCheckedAt  *time.Time
	VerificationConfidence int16
	IsCatchAll             bool
	ESPProvider            string
	ESPResolvedAt          *time.Time
	LastContactedAt        *time.Time
	CreatedAt              time.Time
	UpdatedAt              time.Time
}

// ScanRow reads the Columns of one row.
func ScanRow(r pgx.Row) (Row, error) {
	var c Row
	err := r.Scan(&c.ID, &c.Email, &c.DuplicateSeq, &c.FirstName, &c.LastName, &c.Company, &c.Phone, &c.CustomFields,
		&c.Subscribed, &c.Source, &c.CampaignCount, &c.VerificationStatus, &c.VerificationSubStatus, &c.VerificationSource,
		&c.VerificationProvider, &c.VerificationReason, &c.VerificationCheckedAt, &c.VerificationConfidence, &c.IsCatchAll,
		&c.ESPProvider, &c.ESPResolvedAt, &c.LastContactedAt, &c.CreatedAt, &c.UpdatedAt)
	if c.CustomFields == nil {
		c.CustomFields = map[string]string{}
	}
	return c, err
}

// Position is where a page ended, in the terms of its sort: the cursor's payload.
type Position struct {
	ID uuid.UUID `json:"i"`
	S  string    `json:"s,omitempty"`
	N  int64     `json:"n,omitempty"`
	T  time.Time `json:"t,omitzero"`
}

// PositionOf is the position of r under sort.
func PositionOf(sort string, r Row) Position {
	p := Position{ID: r.ID}
	switch sort {
	case SortUpdatedAt:
		p.T = r.UpdatedAt
	case SortFirstName:
		p.S = r.FirstName
	case SortLastName:
		p.S = r.LastName
	case SortEmail:
		p.S, p.N = r.Email, r.DuplicateSeq
	case SortCampaignCount:
		p.N = int64(r.CampaignCount)
	}
	return p
}

// perCall makes pgx send a query as an unnamed statement (its parameter types described once and cached),
// which Postgres parses and plans with the actual values every time. The search's statements must never run as cached prepared statements: after five runs Postgres may
// switch to a generic plan, and a generic plan cannot know that a LIKE pattern is selective enough for the
// trigram index (a text search went from 11 ms to 760 ms at a million contacts).
func perCall(args []any) []any {
	return append([]any{pgx.QueryExecModeCacheDescribe}, args...)
}

// builder collects positional arguments; $1 is always the organization. bounded records that a top-level
// condition keeps the query to a trigram lookup's matches (see restrict). byKey says the query reads given
// contacts by id, which the LIKE conditions recheck cheaply: it needs no trigram lookup over the organization.
type builder struct {
	args    []any
	bounded bool
	byKey   bool
}

func (b *builder) arg(v any) string {
	b.args = append(b.args, v)
	return fmt.Sprintf("$%d", len(b.args))
}

// LikeEscape makes s match itself inside a LIKE pattern (backslash, percent and underscore escaped).
func LikeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// jsonSafe reports whether s appears verbatim in jsonb's text output and lowercases the same in Go and in
// Postgres: printable ASCII without quote or backslash.
func jsonSafe(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e || s[i] == '"' || s[i] == '\\' {
			return false
		}
	}
	return true
}

// segmentDef is what a segment_ids condition needs of a segment.
type segmentDef struct {
	dynamic bool
	filter  Filter
}

func loadSegments(ctx context.Context, q Querier, b *builder, ids []uuid.UUID) (map[uuid.UUID]segmentDef, error) {
	rows, err := queries.ContactSegmentDefs(ctx, q, dbq.ContactSegmentDefsParams{OrganizationID: b.args[0].(uuid.UUID), Ids: ids})
	if err != nil {
		return nil, fmt.Errorf("load segments: %w", err)
	}
	out := make(map[uuid.UUID]segmentDef, len(rows))
	for _, r := range rows {
		def := segmentDef{dynamic: r.Kind == "dynamic"}
		if def.dynamic {
			if def.filter, err = DecodeStored(r.Filters); err != nil {
				return nil, err
			}
		}
		out[r.ID] = def
	}
	return out, nil
}

// conditions returns f's conditions over contacts c (ANDed; "true" when none). depth guards segment nesting:
// a dynamic segment's stored filter never names segments (segment writes refuse it), and anything deeper than
// one level matches nothing rather than recursing.
func conditions(ctx context.Context, q Querier, b *builder, f Filter, depth int) (string, error) {
	var w []string
	if f.Query != "" {
		// From three characters (the shortest with a trigram) the index finds a selective pattern's few
		// matches as candidates; the condition below rechecks them.
		if textLookup(f.Query) && !b.byKey {
			l, err := f.textMatches(ctx, q)
			if err != nil {
				return "", err
			}
			w = b.restrict(w, l, depth)
		}
		w = append(w, SearchTextSQL+" LIKE "+b.arg(textPattern(f.Query)))
	}
	for i, cf := range f.Custom {
		key := b.arg(cf.Name)
		v := strings.ToLower(cf.Value)
		val := LikeEscape(v)
		switch cf.Type {
		case "equal":
			w = append(w, fmt.Sprintf("lower(c.custom_fields->>%s) = %s", key, b.arg(v)))
		case "starts_with":
			w = append(w, fmt.Sprintf("lower(c.custom_fields->>%s) LIKE %s", key, b.arg(val+"%")))
		case "ends_with":
			w = append(w, fmt.Sprintf("lower(c.custom_fields->>%s) LIKE %s", key, b.arg("%"+val)))
		default: // contains
			w = append(w, fmt.Sprintf("lower(c.custom_fields->>%s) LIKE %s", key, b.arg("%"+val+"%")))
		}
		// The trigram pre-filter (contacts_custom_candidates, over contacts_custom_fields) finds candidates by
		// the value alone (the key's trigrams are in every row, so naming it would only slow the index scan);
		// the condition above rechecks them against the one key.
		if customLookup(cf) && !b.byKey {
			l, err := f.customMatches(ctx, q, i)
			if err != nil {
				return "", err
			}
			w = b.restrict(w, l, depth)
		}
	}
	one, hasOne := f.OneCampaign()
	for _, id := range f.CampaignIDs {
		cond := fmt.Sprintf("EXISTS (SELECT 1 FROM campaign_leads l WHERE l.organization_id = $1 AND l.campaign_id = %s AND l.contact_id = c.id", b.arg(id))
		if hasOne && id == one {
			if f.LeadStatus != "" {
				cond += " AND (" + LeadStatusSQL + ") = " + b.arg(f.LeadStatus)
			}
			if f.Engagement != "" {
				cond += " AND " + engagementSQL[f.Engagement]
			}
		}
		w = append(w, cond+")")
	}
	for _, id := range f.CategoryIDs {
		w = append(w, fmt.Sprintf("EXISTS (SELECT 1 FROM contact_categories cc WHERE cc.organization_id = $1 AND cc.category_id = %s AND cc.contact_id = c.id)", b.arg(id)))
	}
	if len(f.SegmentIDs) > 0 || len(f.AnySegmentIDs) > 0 {
		defs, err := loadSegments(ctx, q, b, slices.Concat(f.SegmentIDs, f.AnySegmentIDs))
		if err != nil {
			return "", err
		}
		for _, id := range f.SegmentIDs {
			cond, err := segmentCondition(ctx, q, b, defs, id, depth)
			if err != nil {
				return "", err
			}
			w = append(w, cond)
		}
		if len(f.AnySegmentIDs) > 0 {
			union := make([]string, 0, len(f.AnySegmentIDs))
			for _, id := range f.AnySegmentIDs {
				cond, err := segmentCondition(ctx, q, b, defs, id, depth)
				if err != nil {
					return "", err
				}
				union = append(union, cond)
			}
			w = append(w, "("+strings.Join(union, " OR ")+")")
		}
	}
	if f.Verification != "" {
		w = append(w, "c.verification_status = "+b.arg(f.Verification))
	}
	if f.MinCampaigns != nil {
		w = append(w, "c.campaign_count >= "+b.arg(*f.MinCampaigns))
	}
	if f.MaxCampaigns != nil {
		w = append(w, "c.campaign_count <= "+b.arg(*f.MaxCampaigns))
	}
	if f.Subscribed != nil {
		w = append(w, "c.subscribed = "+b.arg(*f.Subscribed))
	}
	// created_at is the id's timestamp, so a created range is also a primary-key range.
	if f.CreatedAfter != nil {
		w = append(w, "c.created_at > "+b.arg(*f.CreatedAfter), "c.id >= "+b.arg(uuidv7.Floor(*f.CreatedAfter)))
	}
	if f.CreatedBefore != nil {
		w = append(w, "c.created_at < "+b.arg(*f.CreatedBefore), "c.id < "+b.arg(uuidv7.Floor(f.CreatedBefore.Add(time.Millisecond))))
	}
	if f.UpdatedAfter != nil {
		w = append(w, "c.updated_at > "+b.arg(*f.UpdatedAfter))
	}
	if f.UpdatedBefore != nil {
		w = append(w, "c.updated_at < "+b.arg(*f.UpdatedBefore))
	}
	if len(w) == 0 {
		return "true", nil
	}
	return strings.Join(w, " AND "), nil
}

// segmentCondition is membership of segment id over contacts c: a static segment's include pins, a dynamic
// segment's include pins or its filter's matches without an exclude pin. An unknown segment, or one reached
// from inside a segment (depth > 0), matches nothing.
func segmentCondition(ctx context.Context, q Querier, b *builder, defs map[uuid.UUID]segmentDef, id uuid.UUID, depth int) (string, error) {
	def, ok := defs[id]
	if !ok || depth > 0 {
		return "false", nil
	}
	sid := b.arg(id)
	pin := func(include bool) string {
		return fmt.Sprintf("EXISTS (SELECT 1 FROM segment_pins p WHERE p.organization_id = $1 AND p.segment_id = %s AND p.contact_id = c.id AND p.include = %t)", sid, include)
	}
	if !def.dynamic {
		return pin(true), nil
	}
	inner, err := conditions(ctx, q, b, def.filter, depth+1)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("(%s OR ((%s) AND NOT %s))", pin(true), inner, pin(false)), nil
}

// orderOf returns the ORDER BY columns of a sort and the keyset comparison against a position. partial
// reports that the sort's index holds only the rows in the search indexes (its predicate is search_ready):
// the created order reads the primary key and the email order the address index, which hold every row.
func orderOf(b *builder, f Filter, after *Position) (order, keyset string, partial bool) {
	dir, cmp := "DESC", "<"
	if f.Ascending {
		dir, cmp = "ASC", ">"
	}
	var cols []string
	var vals []string
	partial = true
	switch f.Sort {
	case SortUpdatedAt:
		cols = []string{"updated_at", "id"}
		if after != nil {
			vals = []string{b.arg(after.T), b.arg(after.ID)}
		}
	case SortFirstName, SortLastName:
		cols = []string{f.Sort, "id"}
		if after != nil {
			vals = []string{b.arg(after.S), b.arg(after.ID)}
		}
	case SortEmail:
		cols, partial = []string{"email", "duplicate_seq"}, false
		if after != nil {
			vals = []string{b.arg(after.S), b.arg(after.N)}
		}
	case SortCampaignCount:
		cols = []string{"campaign_count", "id"}
		if after != nil {
			vals = []string{b.arg(int32(after.N)), b.arg(after.ID)}
		}
	default:
		cols, partial = []string{"id"}, false
		if after != nil {
			vals = []string{b.arg(after.ID)}
		}
	}
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = "c." + c + " " + dir
	}
	order = strings.Join(parts, ", ")
	if after != nil {
		keyset = fmt.Sprintf("(c.%s) %s (%s)", strings.Join(cols, ", c."), cmp, strings.Join(vals, ", "))
	}
	return order, keyset, partial
}

// SearchSQL returns the page query of f after a position (nil: the first page) and its arguments, which start
// with the pgx query mode the statement must run under (see perCall). Exported for the benchmark that runs it
// directly.
//
// Rows an import has not put into the search indexes yet (search_ready false; a full import leaves 50,000
// until the index job has run) are outside the trigram and the partial sort indexes. The query reads them as
// follows, so that a search right after an import costs about what it does once they are indexed:
//
//   - when a trigram lookup bounds the query (a selective text query or custom-field value), its matches are
//     every row the query can return, indexed or not (see Resolve), and the query reads them by key;
//   - when the sort's index holds every row (the created order, which is the primary key's, and the email
//     order), the query reads it in order and stops at the page's last row, whichever rows are indexed,
//     unless a condition bounds a column that only a partial index orders (see boundsPartialColumn);
//   - otherwise the indexed rows and the pending ones are two ordered arms merged by the outer ORDER BY, so
//     the first can use the partial sort index. The second reads each pending id range
//     (contacts_pending_ranges) with the conditions, the order and the limit inside the range's scan.
//
// Every search used to be the two arms, and each read all 50,000 pending rows on every page: the first walked
// the primary key past them (they are the newest) looking for indexed rows, the second read the ranges whole
// and sorted them.
func SearchSQL(ctx context.Context, q Querier, org uuid.UUID, f Filter, after *Position, limit int) (string, []any, error) {
	b := &builder{args: []any{org}}
	cond, err := conditions(ctx, q, b, f, 0)
	if err != nil {
		return "", nil, err
	}
	order, keyset, partial := orderOf(b, f, after)
	if keyset != "" {
		cond += " AND " + keyset
	}
	lim := b.arg(limit)
	if b.bounded {
		// OFFSET 0 keeps the order out of the scan: the matches are read by key and then sorted. Offered the
		// order, the planner may walk the organization's rows in it and test each against the matches, which
		// before the statistics know an import's rows looks cheap and reads all of them.
		return fmt.Sprintf(`SELECT %s FROM (SELECT * FROM contacts c WHERE c.organization_id = $1 AND %s OFFSET 0) c ORDER BY %s LIMIT %s`,
			Columns, cond, order, lim), perCall(b.args), nil
	}
	if !partial && !f.boundsPartialColumn() {
		return fmt.Sprintf(`SELECT %s FROM contacts c WHERE c.organization_id = $1 AND %s ORDER BY %s LIMIT %s`,
			Columns, cond, order, lim), perCall(b.args), nil
	}
	sql := fmt.Sprintf(`SELECT %s FROM (
  (SELECT c.* FROM contacts c WHERE c.organization_id = $1 AND c.search_ready AND %s ORDER BY %s LIMIT %s)
  UNION ALL
  (SELECT p.* FROM contacts_pending_ranges($1) r, LATERAL (SELECT c.* FROM contacts c
     WHERE c.organization_id = $1 AND c.id BETWEEN r.lo AND r.hi AND NOT c.search_ready AND %s ORDER BY %s LIMIT %s) p
   ORDER BY %s LIMIT %s)
) u ORDER BY %s LIMIT %s`, strings.ReplaceAll(Columns, "c.", "u."), cond, order, lim, cond, order, lim,
		strings.ReplaceAll(order, "c.", "p."), lim, strings.ReplaceAll(order, "c.", "u."), lim)
	return sql, perCall(b.args), nil
}

// boundsPartialColumn reports that f bounds updated_at or campaign_count, which only partial indexes order
// (contacts_updated, contacts_campaign_count): the indexed rows' arm can read such a bound as a range.
func (f Filter) boundsPartialColumn() bool {
	return f.UpdatedAfter != nil || f.UpdatedBefore != nil || f.MinCampaigns != nil || f.MaxCampaigns != nil
}

// Search returns up to limit contacts matching f after a position, in f's order.
func Search(ctx context.Context, q Querier, org uuid.UUID, f Filter, after *Position, limit int) ([]Row, error) {
	sql, args, err := SearchSQL(ctx, q, org, f, after, limit)
	if err != nil {
		return nil, err
	}
	return queryRows(ctx, q, sql, args...)
}

func queryRows(ctx context.Context, q Querier, sql string, args ...any) ([]Row, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("query contacts: %w", err)
	}
	defer rows.Close()
	var out []Row
	for rows.Next() {
		r, err := ScanRow(rows)
		if err != nil {
			return nil, fmt.Errorf("scan contact: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Count counts the contacts matching f. An empty filter reads the kept org-wide total.
func Count(ctx context.Context, q Querier, org uuid.UUID, f Filter) (int64, error) {
	if f.Empty() {
		stats, err := queries.ContactStats(ctx, q, org)
		return stats.Total, err
	}
	b := &builder{args: []any{org}}
	cond, err := conditions(ctx, q, b, f, 0)
	if err != nil {
		return 0, err
	}
	// As in SearchSQL: a lookup's matches by key, or the indexed rows and the pending ones.
	sql := fmt.Sprintf(`SELECT count(*) FROM contacts c WHERE c.organization_id = $1 AND %s`, cond)
	if !b.bounded {
		sql = fmt.Sprintf(`SELECT
  (SELECT count(*) FROM contacts c WHERE c.organization_id = $1 AND c.search_ready AND %s) +
  (SELECT count(*) FROM contacts_pending_ranges($1) r, LATERAL (SELECT 1 FROM contacts c
     WHERE c.organization_id = $1 AND c.id BETWEEN r.lo AND r.hi AND NOT c.search_ready AND %s OFFSET 0) p)`, cond, cond)
	}
	var n int64
	err = q.QueryRow(ctx, sql, perCall(b.args)...).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count contacts: %w", err)
	}
	return n, nil
}

// MatchingIDs returns the ids of up to max contacts matching f, leaving out exclude, in id order.
func MatchingIDs(ctx context.Context, q Querier, org uuid.UUID, f Filter, exclude []uuid.UUID, max int) ([]uuid.UUID, error) {
	b := &builder{args: []any{org}}
	cond, err := conditions(ctx, q, b, f, 0)
	if err != nil {
		return nil, err
	}
	if len(exclude) > 0 {
		cond += " AND NOT (c.id = ANY(" + b.arg(exclude) + "))"
	}
	rows, err := q.Query(ctx, fmt.Sprintf(`SELECT c.id FROM contacts c WHERE c.organization_id = $1 AND %s ORDER BY c.id LIMIT %s`, cond, b.arg(max)), perCall(b.args)...)
	if err != nil {
		return nil, fmt.Errorf("select contacts: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
}

// ByIDs loads the contacts with ids (those that exist), in id order.
func ByIDs(ctx context.Context, q Querier, org uuid.UUID, ids []uuid.UUID) ([]Row, error) {
	return queryRows(ctx, q, `SELECT `+Columns+` FROM contacts c WHERE c.organization_id = $1 AND c.id = ANY($2) ORDER BY c.id`, org, ids)
}

// Stream calls fn for every contact matching f (at most max), in id order, reading in batches so memory
// stays flat whatever the count. With ids set, only those contacts are considered.
func Stream(ctx context.Context, q Querier, org uuid.UUID, f Filter, ids []uuid.UUID, max int, fn func(Row) error) error {
	b := &builder{args: []any{org}}
	cond, err := conditions(ctx, q, b, f, 0)
	if err != nil {
		return err
	}
	if ids != nil {
		cond += " AND c.id = ANY(" + b.arg(ids) + ")"
	}
	after := b.arg(uuid.Nil)
	lim := b.arg(0)
	sql := fmt.Sprintf(`SELECT %s FROM contacts c WHERE c.organization_id = $1 AND %s AND c.id > %s ORDER BY c.id LIMIT %s`, Columns, cond, after, lim)
	const batch = 1000
	last, sent := uuid.Nil, 0
	for sent < max {
		n := min(batch, max-sent)
		b.args[len(b.args)-2], b.args[len(b.args)-1] = last, n
		rows, err := queryRows(ctx, q, sql, perCall(b.args)...)
		if err != nil {
			return err
		}
		for _, r := range rows {
			if err := fn(r); err != nil {
				return err
			}
		}
		sent += len(rows)
		if len(rows) < n {
			return nil
		}
		last = rows[len(rows)-1].ID
	}
	return nil
}

// LeadCountsSQL (statement and arguments, mode first as SearchSQL's) counts one campaign's leads among the contacts f selects: total, by status (queued = pending,
// processing = active, completed, replied, bounced, failed, paused, undeliverable, unsubscribed) and the
// engagement totals contacted, opened (human), clicked and replied_any.
func LeadCountsSQL(ctx context.Context, q Querier, org uuid.UUID, f Filter, campaign uuid.UUID) (string, []any, error) {
	b := &builder{args: []any{org}}
	cond, err := conditions(ctx, q, b, f, 0)
	if err != nil {
		return "", nil, err
	}
	camp := b.arg(campaign)
	return fmt.Sprintf(`SELECT count(*),
  count(*) FILTER (WHERE s = 'pending'), count(*) FILTER (WHERE s = 'active'), count(*) FILTER (WHERE s = 'completed'),
  count(*) FILTER (WHERE s = 'replied'), count(*) FILTER (WHERE s = 'bounced'), count(*) FILTER (WHERE s = 'failed'),
  count(*) FILTER (WHERE s = 'paused'), count(*) FILTER (WHERE s = 'undeliverable'), count(*) FILTER (WHERE s = 'unsubscribed'),
  count(*) FILTER (WHERE sent > 0), count(*) FILTER (WHERE opened > 0), count(*) FILTER (WHERE clicked > 0),
  count(*) FILTER (WHERE replied > 0)
FROM (SELECT %s AS s, l.sent, l.opened, l.clicked, l.replied
  FROM campaign_leads l JOIN contacts c ON c.organization_id = l.organization_id AND c.id = l.contact_id
  WHERE l.organization_id = $1 AND l.campaign_id = %s AND %s) x`, LeadStatusSQL, camp, cond), perCall(b.args), nil
}
