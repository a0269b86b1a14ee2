// Package avatar checks and stores profile pictures. Uploads are judged by their content, never their file
// name: PNG or JPEG, at most MaxBytes, at most MaxSide pixels a side, and decodable as a whole. Files are kept
// behind Store, whose local-directory implementation (Dir) also serves them read-only under URLPath; names are
// random, so a replaced avatar gets a new URL and caches never show a stale one.
package avatar
