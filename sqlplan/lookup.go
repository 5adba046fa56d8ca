package sqlplan

import "github.com/flusslite/fluss/metadata"

// PointLookup tells whether a query can be answered by looking one key up
// in the live KV state instead of scanning: the table is a real
// primary-key table and the top-level conjuncts of the WHERE pin every
// primary-key column, partition keys included, with col = literal (or
// literal = col, or <=> with a non-NULL literal) whose value is exactly a
// value of the column's type. keyRow is then a full-schema row with the
// key columns set (the rest nil), ready for the engine's Lookup; residual
// are the other conjuncts, still to be evaluated over the row found
// (including a second equality on a key column, which may contradict the
// first).
//
// A literal that does not convert exactly (tinyint_key = 300, int_key =
// 2.5, a TIMESTAMP(3) key compared with a finer instant) matches no stored
// key; ok is then false and a scan finds nothing, which keeps one code
// path for the odd cases. PointLookup reads the plan only; GROUP BY,
// ORDER BY, LIMIT and the select list are applied to the row as usual.
func PointLookup(p *SelectPlan) (keyRow []any, residual []Expr, ok bool) {
	if p == nil || !p.From || p.Virtual != "" || !p.Table.HasPrimaryKey() || p.Where == nil {
		return nil, nil, false
	}
	keys, err := p.Table.Schema.Indexes(p.Table.Schema.PrimaryKey)
	if err != nil {
		return nil, nil, false
	}
	isKey := make(map[int]bool, len(keys))
	for _, k := range keys {
		isKey[k] = true
	}
	cols := p.Table.Schema.Columns
	row := make([]any, len(cols))
	pinned := make(map[int]bool, len(keys))
	for _, c := range Conjuncts(p.Where) {
		if i, v, found := keyEquality(c, cols, isKey); found && !pinned[i] {
			row[i], pinned[i] = v, true
			continue
		}
		residual = append(residual, c)
	}
	if len(pinned) != len(keys) {
		return nil, nil, false
	}
	return row, residual, true
}

// keyEquality matches key_col = literal (either way round, = or <=>) and
// returns the column index and the literal's value in the column's type;
// found is false when e is no such equality or the value is not exactly a
// value of the column's type.
func keyEquality(e Expr, cols []metadata.Column, isKey map[int]bool) (int, any, bool) {
	cmp, ok := e.(*Compare)
	if !ok || cmp.Op != OpEq && cmp.Op != OpNullSafeEq {
		return 0, nil, false
	}
	ref, refOK := cmp.L.(*ColumnRef)
	lit, litOK := cmp.R.(*Literal)
	if !refOK || !litOK {
		ref, refOK = cmp.R.(*ColumnRef)
		lit, litOK = cmp.L.(*Literal)
	}
	if !refOK || !litOK || ref.Index < 0 || ref.Index >= len(cols) || !isKey[ref.Index] || lit.Value == nil {
		return 0, nil, false
	}
	v, ok := exactValue(lit, cols[ref.Index].Type)
	return ref.Index, v, ok
}

// exactValue converts a bound literal to t when the value survives the
// conversion unchanged. Binding has already converted every literal that
// converts without loss, so this mostly confirms the type; it also narrows
// the TIMESTAMP(9) and TIME(9) literals binding keeps for comparisons.
func exactValue(l *Literal, t metadata.DataType) (any, bool) {
	if l.T.Equal(t) {
		return l.Value, true
	}
	if l.T.Root == 0 || !comparableTypes(t, l.T) {
		return nil, false
	}
	v, err := metadata.CoerceValue(t, l.Value)
	if err != nil || v == nil || metadata.Compare(v, l.Value) != 0 {
		return nil, false
	}
	return v, true
}

// maxIndexKeys bounds the keys one index lookup reads: an IN list (or
// the product of several) longer than that is scanned instead.
const maxIndexKeys = 1024

// IndexLookup finds the secondary index of p's primary-key table that the
// WHERE pins best: conjuncts col = literal or col IN (literal, ...) on its
// leading columns, the more columns the better, a UNIQUE index pinned
// whole first. It returns the index, the key tuples to read (values of
// the pinned leading columns, in index order, each exactly a value of its
// column's type and none NULL) and ok. Every WHERE conjunct stays to be
// evaluated over the rows found, the pinning ones included.
func IndexLookup(p *SelectPlan) (index metadata.DeclaredIndex, keys [][]any, ok bool) {
	if p == nil || !p.From || p.Virtual != "" || !p.Table.HasPrimaryKey() || p.Where == nil || len(p.Table.Indexes) == 0 {
		return index, nil, false
	}
	cols := p.Table.Schema.Columns
	// The values each column is pinned to, by the first conjunct that
	// pins it.
	pinned := map[int][]any{}
	for _, c := range Conjuncts(p.Where) {
		i, vals, found := pinningValues(c, cols)
		if found {
			if _, seen := pinned[i]; !seen {
				pinned[i] = vals
			}
		}
	}
	if len(pinned) == 0 {
		return index, nil, false
	}
	best, bestScore := -1, 0
	for n, ix := range p.Table.Indexes {
		lead := 0
		for _, c := range p.Table.IndexColumns(ix) {
			if _, ok := pinned[c]; !ok {
				break
			}
			lead++
		}
		score := 2 * lead
		if ix.Unique && lead == len(ix.Columns) {
			score++
		}
		if score > bestScore {
			best, bestScore = n, score
		}
	}
	if best < 0 {
		return index, nil, false
	}
	index = p.Table.Indexes[best]
	keys = [][]any{nil}
	for _, c := range p.Table.IndexColumns(index) {
		vals, ok := pinned[c]
		if !ok {
			break
		}
		if len(keys)*len(vals) > maxIndexKeys {
			return index, nil, false
		}
		next := make([][]any, 0, len(keys)*len(vals))
		for _, k := range keys {
			for _, v := range vals {
				next = append(next, append(k[:len(k):len(k)], v))
			}
		}
		keys = next
	}
	return index, keys, true
}

// pinningValues matches col = literal (either way round; = or <=>) and
// col IN (literal, ...) and returns the column and the values it may
// hold (a NULL in the list matches no row and is left out). A literal
// that is not exactly a value of the column's type pins nothing: a scan
// compares it as the column's values compare (a string column with a
// number, say).
func pinningValues(e Expr, cols []metadata.Column) (int, []any, bool) {
	if in, ok := e.(*In); ok && !in.Not {
		ref, ok := in.E.(*ColumnRef)
		if !ok || ref.Index < 0 || ref.Index >= len(cols) {
			return 0, nil, false
		}
		var vals []any
		for _, item := range in.List {
			lit, ok := item.(*Literal)
			if !ok {
				return 0, nil, false
			}
			if lit.Value == nil {
				continue
			}
			v, ok := exactValue(lit, cols[ref.Index].Type)
			if !ok {
				return 0, nil, false
			}
			vals = append(vals, v)
		}
		return ref.Index, vals, true
	}
	cmp, ok := e.(*Compare)
	if !ok || cmp.Op != OpEq && cmp.Op != OpNullSafeEq {
		return 0, nil, false
	}
	ref, refOK := cmp.L.(*ColumnRef)
	lit, litOK := cmp.R.(*Literal)
	if !refOK || !litOK {
		ref, refOK = cmp.R.(*ColumnRef)
		lit, litOK = cmp.L.(*Literal)
	}
	if !refOK || !litOK || ref.Index < 0 || ref.Index >= len(cols) {
		return 0, nil, false
	}
	if lit.Value == nil {
		// col = NULL holds for no row; col <=> NULL for the NULL ones,
		// which an index lookup does not read.
		if cmp.Op == OpEq {
			return ref.Index, nil, true
		}
		return 0, nil, false
	}
	v, ok := exactValue(lit, cols[ref.Index].Type)
	if !ok {
		return 0, nil, false
	}
	return ref.Index, []any{v}, true
}
