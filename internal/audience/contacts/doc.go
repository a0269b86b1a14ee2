// Package contacts holds the rules every contact writer and reader shares: how an address is read, which
// verification verdicts other verifiers' vocabularies mean, what a custom-field name may be, and how a
// contact search body becomes one SQL query (the search, bulk selections, exports, segments and verification
// runs all select contacts through Filter). It takes its own input types (SearchInput, SelectionInput);
// handlers translate the API's requests into them, so the rules do not depend on the generated API.
//
// Searches page by keyset over indexes that start with organization_id; nothing pages by OFFSET (OFFSET 0
// appears only as a fence that keeps the planner from flattening a subquery). Every query names the
// organization, and row-level security stands behind it.
//
// Rows an import wrote outside the search indexes (search_ready false, until the index job has run) are
// always found: the trigram lookups read them through their pending id ranges, and a search reads them by
// key (its lookup's matches), in an index that holds every row, or as a second arm over the ranges with its
// order and limit inside each range's scan (SearchSQL). A request resolves its lookups once (Resolve), so a
// page and its total read the pending rows once between them.
package contacts
