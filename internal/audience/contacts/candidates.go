package contacts

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// maxCandidates is how many trigram matches a selective pattern may have. Past it the pattern is broad, and
// a scan in the query's own order, which stops at the page's last row, beats fetching every match first.
const maxCandidates = 10000

// matches is what one trigram lookup found: the ids of every contact of the organization matching a
// pattern, indexed or not yet (the lookup functions read both), or broad when there were more than
// maxCandidates.
type matches struct {
	ids   []uuid.UUID
	broad bool
}

// resolved holds the lookups Resolve made for a filter: the text query's, and each custom filter's by its
// index in Filter.Custom (nil where that filter takes none).
type resolved struct {
	text   *matches
	custom []*matches
}

// textLookup reports whether a text query is looked up in the trigram index: from three characters, the
// shortest with a trigram.
func textLookup(query string) bool { return utf8.RuneCountInString(query) >= 3 }

// textPattern is the LIKE pattern of a text query over SearchTextSQL.
func textPattern(query string) string { return "%" + LikeEscape(strings.ToLower(query)) + "%" }

// customLookup reports whether a custom-field filter's value is looked up in the trigram index: only values
// of three or more characters have trigrams, and only values that appear verbatim in the JSON text can be
// looked for in it.
func customLookup(cf CustomFilter) bool { return jsonSafe(cf.Value) && len(cf.Value) >= 3 }

// customPattern is the LIKE pattern of a custom-field value over the fields' JSON text.
func customPattern(cf CustomFilter) string { return "%" + LikeEscape(strings.ToLower(cf.Value)) + "%" }

// lookup asks fn (contacts_text_candidates or contacts_custom_candidates; see their migration for why they
// exist) for the ids matching a LIKE pattern through the trigram indexes and the rows an import has not
// indexed yet.
func lookup(ctx context.Context, q Querier, fn, pattern string) (matches, error) {
	rows, err := q.Query(ctx, "SELECT "+fn+"($1, $2)", pattern, maxCandidates+1)
	if err != nil {
		return matches{}, fmt.Errorf("%s: %w", fn, err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return matches{}, fmt.Errorf("%s: %w", fn, err)
	}
	if len(ids) > maxCandidates {
		return matches{broad: true}, nil
	}
	return matches{ids: ids}, nil
}

// textMatches is f's text query looked up: what Resolve found, or a lookup now.
func (f Filter) textMatches(ctx context.Context, q Querier) (matches, error) {
	if f.resolved != nil && f.resolved.text != nil {
		return *f.resolved.text, nil
	}
	return lookup(ctx, q, "contacts_text_candidates", textPattern(f.Query))
}

// customMatches is f.Custom[i] looked up: what Resolve found, or a lookup now.
func (f Filter) customMatches(ctx context.Context, q Querier, i int) (matches, error) {
	if f.resolved != nil && f.resolved.custom[i] != nil {
		return *f.resolved.custom[i], nil
	}
	return lookup(ctx, q, "contacts_custom_candidates", customPattern(f.Custom[i]))
}

// Resolve looks f's text query and custom-field values up once and returns f carrying what they matched, for
// the statements that follow in the same transaction: a page and its total would otherwise each repeat the
// lookups, and a lookup reads every row an import has not put into the trigram indexes yet (50,000 after a
// full import, the largest part of a search in the seconds before the index job has run). The result holds
// only in the transaction that resolved it: rows written later are not in it.
func Resolve(ctx context.Context, q Querier, f Filter) (Filter, error) {
	r := &resolved{custom: make([]*matches, len(f.Custom))}
	if f.Query != "" && textLookup(f.Query) {
		m, err := f.textMatches(ctx, q)
		if err != nil {
			return f, err
		}
		r.text = &m
	}
	for i, cf := range f.Custom {
		if !customLookup(cf) {
			continue
		}
		m, err := f.customMatches(ctx, q, i)
		if err != nil {
			return f, err
		}
		r.custom[i] = &m
	}
	f.resolved = r
	return f, nil
}

// restrict adds the condition that keeps a query to a lookup's matches, unless the lookup was broad. At the
// top level (depth 0) every row the query can return is then among the matches, indexed or not, so the query
// reads them by key instead of in two arms (bounded).
func (b *builder) restrict(w []string, m matches, depth int) []string {
	if m.broad {
		return w
	}
	if depth == 0 {
		b.bounded = true
	}
	return append(w, "c.id = ANY("+b.arg(m.ids)+")")
}
