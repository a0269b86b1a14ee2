package classify

import (
	"slices"
	"strings"
)

// class is what a phrase says.
type class int

const (
	classPositive class = iota
	classNegative
	classQuestion
	classNeutral
	classUnsubscribe
	classOOO
	classAutomated
)

// phrase is one entry of a list, as words.
type phrase struct {
	words []string
	text  string
	class class
	lang  string
	// keyword marks a campaign's reply_intent keyword (evidence kind keyword), which weighs more.
	keyword bool
}

// index finds phrases by their first word.
type index map[string][]phrase

func (ix index) add(text string, c class, lang string, keyword bool) {
	w := tokens(fold(text))
	if len(w) == 0 {
		return
	}
	ix[w[0]] = append(ix[w[0]], phrase{words: w, text: text, class: c, lang: lang, keyword: keyword})
}

// hit is a phrase found in text at words [start, end).
type hit struct {
	phrase
	start, end int
}

// find answers the phrases of ixs found in words, longest first where they overlap (so "not interested" is
// one negative phrase, not a negative one around a positive one), in text order.
func find(words []string, ixs ...index) []hit {
	var all []hit
	for i, w := range words {
		for _, ix := range ixs {
			for _, p := range ix[w] {
				if i+len(p.words) <= len(words) && slices.Equal(words[i:i+len(p.words)], p.words) {
					all = append(all, hit{phrase: p, start: i, end: i + len(p.words)})
				}
			}
		}
	}
	slices.SortStableFunc(all, func(a, b hit) int {
		if d := (b.end - b.start) - (a.end - a.start); d != 0 {
			return d
		}
		if a.keyword != b.keyword {
			if a.keyword {
				return -1
			}
			return 1
		}
		return a.start - b.start
	})
	used := make([]bool, len(words))
	var out []hit
	for _, h := range all {
		if slices.Contains(used[h.start:h.end], true) {
			continue
		}
		for i := h.start; i < h.end; i++ {
			used[i] = true
		}
		out = append(out, h)
	}
	slices.SortFunc(out, func(a, b hit) int { return a.start - b.start })
	return out
}

// prefixed answers the first phrase of ix the words start with (the longest), if any.
func prefixed(words []string, ix index) (phrase, bool) {
	if len(words) == 0 {
		return phrase{}, false
	}
	var best phrase
	found := false
	for _, p := range ix[words[0]] {
		if len(p.words) <= len(words) && slices.Equal(words[:len(p.words)], p.words) && len(p.words) > len(best.words) {
			best, found = p, true
		}
	}
	return best, found
}

// distinct counts the different phrases among hits.
func distinct(hits []hit) int {
	seen := map[string]bool{}
	for _, h := range hits {
		seen[strings.Join(h.words, " ")] = true
	}
	return len(seen)
}
