// Package suppression decides what counts as a suppressible recipient: an email address or a whole domain,
// normalized the one way every writer (the API, imports, bounces, unsubscribes) and every send check agree on.
package suppression
