// Package contacts holds the rules every contact writer and reader shares: how an address is read, which
// verification verdicts other verifiers' vocabularies mean, what a custom-field name may be, and how a
// contact search body becomes one SQL query (the search, bulk selections, exports, segments and verification
// runs all select contacts through Filter). It takes its own input types (SearchInput, SelectionInput);
// handlers translate the API's requests into them, so the rules do not depend on the generated API.
//
// Searches page by keyset over indexes that start with organization_id; nothing uses OFFSET. Every query
// names the organization, and row-level security stands behind it.
package contacts
