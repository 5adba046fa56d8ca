package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/sqlplan"
)

// JoinKind says which rows a join yields.
type JoinKind uint8

const (
	// JoinInner yields each matching pair: probe columns, then build
	// columns.
	JoinInner JoinKind = iota + 1
	// JoinLeft yields every probe row: with each build row it matches,
	// or once with NULL build columns when it matches none.
	JoinLeft
	// JoinSemi yields a probe row (its columns only) once when some build
	// row matches it.
	JoinSemi
	// JoinAnti yields a probe row (its columns only) when no build row
	// matches it.
	JoinAnti
	// JoinAntiNullAware is NOT IN over one key: a probe row is yielded
	// when its key is not NULL, no build key equals it and no build key is
	// NULL; with an empty build side every probe row is, NULL key or not.
	// With a residual, only the build rows that satisfy it with the probe
	// row count (a correlated NOT IN).
	JoinAntiNullAware
)

func (k JoinKind) String() string {
	switch k {
	case JoinInner:
		return "inner"
	case JoinLeft:
		return "left"
	case JoinSemi:
		return "semi"
	case JoinAnti:
		return "anti"
	case JoinAntiNullAware:
		return "null-aware anti"
	}
	return fmt.Sprintf("JoinKind(%d)", uint8(k))
}

// JoinSpec describes one hash join. It is inert data.
type JoinSpec struct {
	Kind JoinKind
	// ProbeKeys[i] = BuildKeys[i] are the equalities, expressions bound
	// over each side's columns (ColumnRef.Index resolved through that
	// side's layout). None: a nested-loop join, every build row is a
	// candidate of every probe row.
	ProbeKeys, BuildKeys []sqlplan.Expr
	// NullSafe[i] makes key i match NULL with NULL (<=>); otherwise a NULL
	// key never matches. Empty: no key is null-safe.
	NullSafe                 []bool
	ProbeLayout, BuildLayout Layout
	// ProbeTypes, BuildTypes are the types of the input records' columns,
	// in record order.
	ProbeTypes, BuildTypes []metadata.DataType
	// Residual are conjuncts over the joined row (a record of the probe
	// columns, then the build columns, addressed through ResidualLayout).
	// A candidate pair matches when all are TRUE; for left, semi and anti
	// joins they decide matching, so a left row whose candidates all fail
	// is NULL-extended.
	Residual       []sqlplan.Expr
	ResidualLayout Layout
	// ProbeOut and BuildOut, when not nil, are the record columns of each
	// side an inner or left join yields, in order, so that columns nothing
	// above reads (often the join's own keys) are not gathered. A join
	// with a Residual yields every column: the residual reads the joined
	// row.
	ProbeOut, BuildOut []int
}

// HashJoin joins probe with build. The build side is read whole on the
// first Next and hashed by its keys; the probe side streams, and the
// output is built in batches of at most outBatchRows rows beyond the
// probe batch's own size, however many build rows one probe row
// matches. Output columns are the probe record's, then (inner and left
// joins) the build record's, of the types the spec gives. The build
// side's memory counts against opts.MemoryLimit. The operator is not safe
// for concurrent use; Close closes both inputs.
func HashJoin(probe, build Operator, spec JoinSpec, opts Options) (Operator, error) {
	opts = opts.withDefaults()
	j := &hashJoin{probe: probe, build: build, spec: spec, mem: opts.Allocator,
		budget: memBudget{limit: opts.MemoryLimit}, nullKeyGroup: -1, nullSafeGroup: -1}
	if err := j.compile(); err != nil {
		return nil, err
	}
	return j, nil
}

// Group ids of a probe row besides the groups' own (0, 1, ...).
const (
	noMatch = -1
	// nullKey marks a probe row whose key is NULL in a null-aware anti
	// join, which is decided by the whole build side.
	nullKey = -2
)

// startRow is the candidate cursor before a probe row's first candidate.
const startRow = -2

type hashJoin struct {
	probe, build Operator
	spec         JoinSpec
	mem          memory.Allocator
	budget       memBudget

	probeKeys, buildKeys []exprColumn
	probeEnv, buildEnv   *env
	domains              []keyDomain
	nullSafe             []bool
	resid                *condition
	probeTypes           []metadata.DataType
	buildTypes           []metadata.DataType
	schema               *arrow.Schema // of the output
	joinedSchema         *arrow.Schema // the probeOut then the buildOut columns
	// probeOut, buildOut are the record columns of each side the joined
	// rows hold (JoinSpec.ProbeOut, BuildOut; all by default).
	probeOut, buildOut []int
	buildSchema        *arrow.Schema

	// The build side: its visible rows in one record, and the hash table
	// from key to a group of rows. Rows of a group are chained in input
	// order: head and tail per group, next per row.
	built    bool
	buildErr error
	buildRec arrow.RecordBatch
	nrows    int
	mode     joinMode
	ints     *intMap
	strs     map[string]int32
	head     []int32
	tail     []int32
	next     []int32
	unique   bool // no group holds more than one row
	// nullSafeGroup is the group of NULL keys when the key is null-safe;
	// nullKeyGroup chains the rows with a NULL key in a null-aware anti
	// join. -1 when there is none.
	nullSafeGroup int32
	nullKeyGroup  int32
	keyBuf        []byte

	// The current probe batch and how far it has been joined.
	cur      Batch
	haveCur  bool
	keyArrs  []arrow.Array
	rows     []int32 // its visible rows
	every    []int32
	gids     []int32 // group per visible row
	pos      int     // next visible row to expand
	c        int32   // next candidate of row pos, or startRow
	stage    uint8   // which candidates c walks: key chain, NULL keys, all rows
	matched  []bool  // per record row
	leftTail bool    // the unmatched rows of a left join are still to come
	pRows    []int32
	bRows    []int32
	align    []int32
	sel      []int32
	tmp      []int32

	out    arrow.RecordBatch
	done   bool
	closed bool
	// part marks one worker's join of a split one: the build side is
	// the split join's, which releases it.
	part bool
}

type joinMode uint8

const (
	modeKeyless joinMode = iota
	modeInt
	modeString
	modeBytes
)

// Candidate walks.
const (
	stageChain uint8 = iota
	stageNullKeys
	stageAll
)

func (j *hashJoin) compile() error {
	s := j.spec
	switch s.Kind {
	case JoinInner, JoinLeft, JoinSemi, JoinAnti, JoinAntiNullAware:
	default:
		return fmt.Errorf("join kind %d: %w", s.Kind, metadata.ErrInvalidValue)
	}
	if len(s.ProbeKeys) != len(s.BuildKeys) {
		return fmt.Errorf("join has %d probe keys and %d build keys: %w", len(s.ProbeKeys), len(s.BuildKeys), metadata.ErrInvalidValue)
	}
	if len(s.NullSafe) != 0 && len(s.NullSafe) != len(s.ProbeKeys) {
		return fmt.Errorf("join has %d keys and %d null-safe flags: %w", len(s.ProbeKeys), len(s.NullSafe), metadata.ErrInvalidValue)
	}
	j.nullSafe = make([]bool, len(s.ProbeKeys))
	copy(j.nullSafe, s.NullSafe)
	if s.Kind == JoinAntiNullAware {
		if len(s.ProbeKeys) != 1 {
			return fmt.Errorf("a null-aware anti join takes one key, not %d: %w", len(s.ProbeKeys), metadata.ErrInvalidValue)
		}
		if j.nullSafe[0] {
			return fmt.Errorf("a null-aware anti join cannot have a null-safe key: %w", metadata.ErrInvalidValue)
		}
	}
	j.probeTypes, j.buildTypes = outputTypes(s.ProbeTypes), outputTypes(s.BuildTypes)
	j.probeEnv, j.buildEnv = &env{layout: s.ProbeLayout}, &env{layout: s.BuildLayout}
	for i := range s.ProbeKeys {
		p, err := newExprColumn(s.ProbeKeys[i], j.probeEnv)
		if err != nil {
			return fmt.Errorf("join key %s: %w", s.ProbeKeys[i], err)
		}
		b, err := newExprColumn(s.BuildKeys[i], j.buildEnv)
		if err != nil {
			return fmt.Errorf("join key %s: %w", s.BuildKeys[i], err)
		}
		d, err := keyDomainOf(s.ProbeKeys[i].Type(), s.BuildKeys[i].Type())
		if err != nil {
			return fmt.Errorf("%s = %s: %w", s.ProbeKeys[i], s.BuildKeys[i], err)
		}
		j.probeKeys, j.buildKeys, j.domains = append(j.probeKeys, p), append(j.buildKeys, b), append(j.domains, d)
	}
	switch {
	case len(j.domains) == 0:
		j.mode = modeKeyless
	case len(j.domains) == 1 && j.domains[0] == domInt:
		j.mode, j.ints = modeInt, newIntMap()
	case len(j.domains) == 1 && j.domains[0] == domRaw &&
		j.probeKeys[0].t.ArrowType().ID() == arrow.STRING && j.buildKeys[0].t.ArrowType().ID() == arrow.STRING:
		j.mode, j.strs = modeString, map[string]int32{}
	default:
		j.mode, j.strs = modeBytes, map[string]int32{}
	}
	if len(s.Residual) > 0 {
		c, err := compileCondition(s.Residual, s.ResidualLayout)
		if err != nil {
			return err
		}
		j.resid = c
	}
	var err error
	if j.probeOut, err = joinOutput(s.ProbeOut, len(j.probeTypes), "probe"); err != nil {
		return err
	}
	if j.buildOut, err = joinOutput(s.BuildOut, len(j.buildTypes), "build"); err != nil {
		return err
	}
	if (s.ProbeOut != nil || s.BuildOut != nil) && (len(s.Residual) > 0 || (s.Kind != JoinInner && s.Kind != JoinLeft)) {
		return fmt.Errorf("only an inner or left join without residual yields a subset of its columns: %w", metadata.ErrInvalidValue)
	}
	joined := make([]metadata.DataType, 0, len(j.probeOut)+len(j.buildOut))
	for _, c := range j.probeOut {
		joined = append(joined, j.probeTypes[c])
	}
	for _, c := range j.buildOut {
		joined = append(joined, j.buildTypes[c])
	}
	j.joinedSchema = positionalSchema(joined)
	j.buildSchema = positionalSchema(j.buildTypes)
	j.schema = j.joinedSchema
	if s.Kind != JoinInner && s.Kind != JoinLeft {
		j.schema = positionalSchema(j.probeTypes)
	}
	return nil
}

// joinOutput checks the columns a join yields of a side of width n: nil
// is all of them.
func joinOutput(out []int, n int, side string) ([]int, error) {
	if out == nil {
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		return all, nil
	}
	for _, c := range out {
		if c < 0 || c >= n {
			return nil, fmt.Errorf("join yields %s column %d of %d: %w", side, c, n, metadata.ErrInvalidValue)
		}
	}
	return out, nil
}

// outputTypes are the types of an operator's columns: an untyped NULL
// column is a STRING one, as exprColumn makes it.
func outputTypes(ts []metadata.DataType) []metadata.DataType {
	out := make([]metadata.DataType, len(ts))
	for i, t := range ts {
		if t.Root == 0 {
			t = metadata.StringType()
		}
		out[i] = t
	}
	return out
}

func positionalSchema(ts []metadata.DataType) *arrow.Schema {
	fields := make([]arrow.Field, len(ts))
	for i, t := range ts {
		fields[i] = arrow.Field{Name: fmt.Sprintf("c%d", i), Type: t.ArrowType(), Nullable: true}
	}
	return arrow.NewSchema(fields, nil)
}

// checkRecord fails when an input record does not hold the columns the
// spec promised, which would otherwise surface as a panic deep in Arrow.
func checkRecord(rec arrow.RecordBatch, types []metadata.DataType, what string) error {
	if int(rec.NumCols()) != len(types) {
		return fmt.Errorf("%s has %d columns, not %d: %w", what, rec.NumCols(), len(types), metadata.ErrInvalidValue)
	}
	for i, t := range types {
		if got := rec.Column(i).DataType(); !arrow.TypeEqual(got, t.ArrowType()) {
			return fmt.Errorf("%s column %d is %s, not %s: %w", what, i, got, t.ArrowType(), metadata.ErrInvalidValue)
		}
	}
	return nil
}

func (j *hashJoin) Next(ctx context.Context) (Batch, error) {
	j.release()
	if j.done {
		return Batch{}, io.EOF
	}
	if err := ctx.Err(); err != nil {
		return Batch{}, err
	}
	if !j.built {
		if j.buildErr != nil {
			return Batch{}, j.buildErr
		}
		if err := j.consumeBuild(ctx); err != nil {
			j.buildErr = err
			return Batch{}, err
		}
		j.built = true
		if j.nothingToYield() {
			j.done = true
			return Batch{}, io.EOF
		}
	}
	for {
		if !j.haveCur {
			if err := ctx.Err(); err != nil {
				return Batch{}, err
			}
			b, err := j.probe.Next(ctx)
			if errors.Is(err, io.EOF) {
				j.done = true
				return Batch{}, io.EOF
			}
			if err != nil {
				return Batch{}, err
			}
			if b.NumRows() == 0 {
				continue
			}
			if err := j.startProbe(b); err != nil {
				return Batch{}, err
			}
		}
		out, ok, err := j.step()
		if err != nil {
			return Batch{}, err
		}
		if ok {
			return out, nil
		}
	}
}

// nothingToYield reports whether the build side alone decides that the
// join is empty, so the probe side need not be read.
func (j *hashJoin) nothingToYield() bool {
	switch j.spec.Kind {
	case JoinInner, JoinSemi:
		return j.nrows == 0
	case JoinAntiNullAware:
		// Some build key is NULL: x NOT IN (..., NULL) is never TRUE.
		return j.resid == nil && j.nullKeyGroup >= 0
	}
	return false
}

// consumeBuild reads the build side whole, keeps its visible rows and
// hashes their keys, then closes it.
func (j *hashJoin) consumeBuild(ctx context.Context) error {
	var pieces []arrow.RecordBatch
	defer func() {
		for _, p := range pieces {
			p.Release()
		}
	}()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		b, err := j.build.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		n := b.NumRows()
		if n == 0 {
			continue
		}
		if err := checkRecord(b.Rec, j.buildTypes, "join build input"); err != nil {
			return err
		}
		if err := j.hashBuild(b, int32(j.nrows)); err != nil {
			return err
		}
		piece, err := j.compact(b)
		if err != nil {
			return err
		}
		pieces = append(pieces, piece)
		j.nrows += n
		j.budget.grow(recordBytes(piece) + int64(n)*4)
		if err := j.budget.check("JOIN", func() string { return count(int64(j.nrows), "build row") }); err != nil {
			return err
		}
	}
	err := j.build.Close()
	j.build = nil
	if err != nil {
		return err
	}
	if j.mode == modeInt {
		// Keys up to a few times the rows are looked up in a flat
		// array: one load per probe row, no hashing.
		j.budget.grow(j.ints.densify(4*int64(j.nrows) + denseKeys))
		if err := j.budget.check("JOIN", func() string { return count(int64(j.nrows), "build row") }); err != nil {
			return err
		}
	}
	j.unique = true
	for _, id := range j.next {
		if id >= 0 {
			j.unique = false
			break
		}
	}
	if j.mode == modeKeyless {
		j.unique = j.nrows <= 1
	}
	return j.concatBuild(pieces)
}

// compact returns b's visible rows as a record of their own; a batch
// without a selection is kept as it is.
func (j *hashJoin) compact(b Batch) (arrow.RecordBatch, error) {
	if b.Sel == nil {
		b.Rec.Retain()
		return b.Rec, nil
	}
	cols := make([]arrow.Array, b.Rec.NumCols())
	defer releaseAll(cols)
	for c := range cols {
		a, err := takeArray(j.mem, b.Rec.Column(c), j.buildTypes[c], b.Sel)
		if err != nil {
			return nil, err
		}
		cols[c] = a
	}
	return array.NewRecordBatch(j.buildSchema, cols, int64(len(b.Sel))), nil
}

// concatBuild joins the kept pieces of the build side into one record, so
// that gathering a build row is one index into one array per column.
func (j *hashJoin) concatBuild(pieces []arrow.RecordBatch) error {
	cols := make([]arrow.Array, len(j.buildTypes))
	defer releaseAll(cols)
	for c, t := range j.buildTypes {
		switch len(pieces) {
		case 0:
			bld := array.NewBuilder(j.mem, t.ArrowType())
			cols[c] = bld.NewArray()
			bld.Release()
		case 1:
			cols[c] = pieces[0].Column(c)
			cols[c].Retain()
		default:
			arrs := make([]arrow.Array, len(pieces))
			for i, p := range pieces {
				arrs[i] = p.Column(c)
			}
			a, err := array.Concatenate(arrs, j.mem)
			if err != nil {
				return fmt.Errorf("join build side: %w", err)
			}
			cols[c] = a
		}
	}
	j.buildRec = array.NewRecordBatch(j.buildSchema, cols, int64(j.nrows))
	return nil
}

// visible returns the visible rows of b, valid while b is.
func (j *hashJoin) visible(b Batch) []int32 {
	if b.Sel != nil {
		return b.Sel
	}
	n := b.NumRows()
	for i := len(j.every); i < n; i++ {
		j.every = append(j.every, int32(i))
	}
	return j.every[:n]
}

func keyArrays(keys []exprColumn, b Batch, mem memory.Allocator, e *env) ([]arrow.Array, error) {
	arrs := make([]arrow.Array, len(keys))
	for i := range keys {
		a, err := keys[i].array(b, mem, e)
		if err != nil {
			releaseAll(arrs)
			return nil, err
		}
		arrs[i] = a
	}
	if err := e.takeErr(); err != nil {
		releaseAll(arrs)
		return nil, err
	}
	return arrs, nil
}

func (j *hashJoin) newGroup() int32 {
	j.head = append(j.head, -1)
	j.tail = append(j.tail, -1)
	j.budget.grow(16)
	return int32(len(j.head) - 1)
}

// link appends build row id to group g.
func (j *hashJoin) link(g, id int32) {
	if j.head[g] < 0 {
		j.head[g] = id
	} else {
		j.next[j.tail[g]] = id
	}
	j.tail[g] = id
}

// nullRow files build row id, whose key is NULL: in the group of NULL
// keys when the key is null-safe, among the NULL keys a null-aware anti
// join looks at, and nowhere otherwise, since it never matches.
func (j *hashJoin) nullRow(id int32) {
	switch {
	case (j.mode == modeInt || j.mode == modeString) && j.nullSafe[0]:
		if j.nullSafeGroup < 0 {
			j.nullSafeGroup = j.newGroup()
		}
		j.link(j.nullSafeGroup, id)
	case j.spec.Kind == JoinAntiNullAware:
		if j.nullKeyGroup < 0 {
			j.nullKeyGroup = j.newGroup()
		}
		j.link(j.nullKeyGroup, id)
	}
}

// hashBuild enters the visible rows of b, numbered from base, into the
// hash table.
func (j *hashJoin) hashBuild(b Batch, base int32) error {
	rows := j.visible(b)
	for range rows {
		j.next = append(j.next, -1)
	}
	if j.mode == modeKeyless {
		if len(j.head) == 0 {
			j.newGroup()
		}
		for i := range rows {
			j.link(0, base+int32(i))
		}
		return nil
	}
	arrs, err := keyArrays(j.buildKeys, b, j.mem, j.buildEnv)
	if err != nil {
		return err
	}
	defer releaseAll(arrs)
	switch j.mode {
	case modeInt:
		switch a := arrs[0].(type) {
		case *array.Int8:
			insertInts(j, a.Int8Values(), a, rows, base)
		case *array.Int16:
			insertInts(j, a.Int16Values(), a, rows, base)
		case *array.Int32:
			insertInts(j, a.Int32Values(), a, rows, base)
		case *array.Int64:
			insertInts(j, a.Int64Values(), a, rows, base)
		default:
			return fmt.Errorf("join key %s is %s, not an integer: %w", j.buildKeys[0].name, a.DataType(), metadata.ErrInvalidValue)
		}
	case modeString:
		a, ok := arrs[0].(*array.String)
		if !ok {
			return fmt.Errorf("join key %s is %s, not a string: %w", j.buildKeys[0].name, arrs[0].DataType(), metadata.ErrInvalidValue)
		}
		for i, r := range rows {
			id := base + int32(i)
			if a.IsNull(int(r)) {
				j.nullRow(id)
				continue
			}
			j.insertKey(a.Value(int(r)), id)
		}
	default:
		for i, r := range rows {
			id := base + int32(i)
			key, null := j.encodeKey(arrs, j.buildKeys, int(r))
			if null {
				j.nullRow(id)
				continue
			}
			j.insertKey(string(key), id)
		}
	}
	return nil
}

// insertKey adds build row id under key, which the map copies when new.
func (j *hashJoin) insertKey(key string, id int32) {
	g, ok := j.strs[key]
	if !ok {
		g = j.newGroup()
		j.strs[strings.Clone(key)] = g
		j.budget.grow(keyBytes(len(key)))
	}
	j.link(g, id)
}

// encodeKey encodes row r's keys into j.keyBuf; null reports a NULL in a
// key that is not null-safe, which matches nothing.
func (j *hashJoin) encodeKey(arrs []arrow.Array, keys []exprColumn, r int) (key []byte, null bool) {
	j.keyBuf = j.keyBuf[:0]
	for k, a := range arrs {
		if a.IsNull(r) && !j.nullSafe[k] {
			return nil, true
		}
		j.keyBuf = appendDomainKey(j.keyBuf, j.domains[k], a, keys[k].t, r)
	}
	return j.keyBuf, false
}

func insertInts[T intValues](j *hashJoin, vals []T, arr arrow.Array, rows []int32, base int32) {
	m := j.ints
	hasNulls := arr.NullN() > 0
	for i, r := range rows {
		id := base + int32(i)
		if hasNulls && arr.IsNull(int(r)) {
			j.nullRow(id)
			continue
		}
		k := int64(vals[r])
		g, slot, ok := m.lookup(k)
		if !ok {
			g = j.newGroup()
			m.insert(slot, k, g)
		}
		j.link(g, id)
	}
}

// probeInts sets gids[i] to the group of row rows[i]'s key, noMatch when
// there is none, or nullG when the key is NULL.
func probeInts[T intValues](m *intMap, vals []T, arr arrow.Array, rows []int32, gids []int32, nullG int32) {
	hasNulls := arr.NullN() > 0
	dense := m.dense
	for i, r := range rows {
		if hasNulls && arr.IsNull(int(r)) {
			gids[i] = nullG
			continue
		}
		k := int64(vals[r])
		if uint64(k) < uint64(len(dense)) {
			gids[i] = dense[k] - 1 // an empty slot holds 0: noMatch
			continue
		}
		if uint64(k) < denseKeys {
			gids[i] = noMatch
			continue
		}
		if g, _, ok := m.lookup(k); ok {
			gids[i] = g
		} else {
			gids[i] = noMatch
		}
	}
}

// startProbe takes b as the current probe batch and looks up the group
// of each visible row.
func (j *hashJoin) startProbe(b Batch) error {
	if err := checkRecord(b.Rec, j.probeTypes, "join probe input"); err != nil {
		return err
	}
	rows := j.visible(b)
	j.gids = resize(j.gids, len(rows))
	nullG := int32(noMatch)
	switch {
	case j.spec.Kind == JoinAntiNullAware:
		nullG = nullKey
	case len(j.nullSafe) == 1 && j.nullSafe[0]:
		nullG = j.nullSafeGroup
	}
	switch j.mode {
	case modeKeyless:
		g := int32(noMatch)
		if j.nrows > 0 {
			g = 0
		}
		for i := range j.gids {
			j.gids[i] = g
		}
	default:
		arrs, err := keyArrays(j.probeKeys, b, j.mem, j.probeEnv)
		if err != nil {
			return err
		}
		j.keyArrs = arrs
		switch j.mode {
		case modeInt:
			switch a := arrs[0].(type) {
			case *array.Int8:
				probeInts(j.ints, a.Int8Values(), a, rows, j.gids, nullG)
			case *array.Int16:
				probeInts(j.ints, a.Int16Values(), a, rows, j.gids, nullG)
			case *array.Int32:
				probeInts(j.ints, a.Int32Values(), a, rows, j.gids, nullG)
			case *array.Int64:
				probeInts(j.ints, a.Int64Values(), a, rows, j.gids, nullG)
			default:
				j.releaseKeys()
				return fmt.Errorf("join key %s is %s, not an integer: %w", j.probeKeys[0].name, a.DataType(), metadata.ErrInvalidValue)
			}
		case modeString:
			a, ok := arrs[0].(*array.String)
			if !ok {
				j.releaseKeys()
				return fmt.Errorf("join key %s is %s, not a string: %w", j.probeKeys[0].name, arrs[0].DataType(), metadata.ErrInvalidValue)
			}
			for i, r := range rows {
				if a.IsNull(int(r)) {
					j.gids[i] = nullG
					continue
				}
				j.gids[i] = j.lookupKey(a.Value(int(r)))
			}
		default:
			for i, r := range rows {
				key, null := j.encodeKey(arrs, j.probeKeys, int(r))
				if null {
					j.gids[i] = nullG
					continue
				}
				j.gids[i] = j.lookupKey(string(key))
			}
		}
	}
	j.cur, j.haveCur, j.rows = b, true, rows
	j.pos, j.c, j.stage = 0, startRow, stageChain
	j.leftTail = j.spec.Kind == JoinLeft
	n := int(b.Rec.NumRows())
	j.matched = resize(j.matched, n)
	clear(j.matched)
	return nil
}

func (j *hashJoin) lookupKey(key string) int32 {
	if g, ok := j.strs[key]; ok {
		return g
	}
	return noMatch
}

func (j *hashJoin) releaseKeys() {
	releaseAll(j.keyArrs)
	j.keyArrs = nil
}

// finishProbe is done with the current probe batch.
func (j *hashJoin) finishProbe() {
	j.releaseKeys()
	j.haveCur = false
}

// step joins more of the current probe batch. It returns a batch to
// yield, or ok false when the probe batch is done without one.
func (j *hashJoin) step() (Batch, bool, error) {
	switch j.spec.Kind {
	case JoinSemi, JoinAnti, JoinAntiNullAware:
		return j.stepFilter()
	}
	if j.unique {
		return j.stepAligned()
	}
	return j.stepPairs()
}

// alignCandidates sets, for a build side with unique keys, align[r] to
// the one candidate build row of probe row r (-1: none) and sel to the
// probe rows that have one.
func (j *hashJoin) alignCandidates() {
	align := resize(j.align, int(j.cur.Rec.NumRows()))
	for i := range align {
		align[i] = -1
	}
	// Locals, not the fields: an append to a field is a pointer write
	// per row.
	sel, head, gids := j.sel[:0], j.head, j.gids
	for i, r := range j.rows {
		if g := gids[i]; g >= 0 {
			align[r] = head[g]
			sel = append(sel, r)
		}
	}
	j.align, j.sel = align, sel
}

// stepAligned joins a probe batch against a build side whose keys are
// unique: each probe row has at most one candidate, so the build columns
// are gathered in the probe record's row order and the probe columns pass
// through uncopied.
func (j *hashJoin) stepAligned() (Batch, bool, error) {
	defer j.finishProbe()
	if j.spec.Kind == JoinInner {
		// The matching pairs first: when few rows match, they are all
		// the output needs.
		pRows, bRows, head, gids := j.pRows[:0], j.bRows[:0], j.head, j.gids
		for i, r := range j.rows {
			if g := gids[i]; g >= 0 {
				pRows, bRows = append(pRows, r), append(bRows, head[g])
			}
		}
		j.pRows, j.bRows = pRows, bRows
		if len(j.pRows) == 0 {
			return Batch{}, false, nil
		}
		if j.compactPays(len(j.pRows)) {
			return j.stepCompact()
		}
	}
	j.alignCandidates()
	rec, err := j.alignedRecord()
	if err != nil {
		return Batch{}, false, err
	}
	sel := j.sel
	if j.resid != nil && len(j.sel) > 0 {
		pass, err := j.resid.eval(rec, j.sel)
		if err != nil {
			rec.Release()
			return Batch{}, false, err
		}
		if j.spec.Kind == JoinLeft && len(pass) < len(j.sel) {
			// The rows that failed are NULL-extended instead.
			k := 0
			for _, r := range j.sel {
				if k < len(pass) && pass[k] == r {
					k++
					continue
				}
				j.align[r] = -1
			}
			rec.Release()
			if rec, err = j.alignedRecord(); err != nil {
				return Batch{}, false, err
			}
		}
		j.tmp = append(j.tmp[:0], pass...)
		sel = j.tmp
	}
	if j.spec.Kind == JoinLeft {
		sel = j.cur.Sel
	} else if len(sel) == 0 {
		rec.Release()
		return Batch{}, false, nil
	} else if len(sel) == int(j.cur.Rec.NumRows()) {
		sel = nil
	}
	j.out = rec
	return Batch{Rec: rec, Sel: sel}, true, nil
}

// compactPays reports whether gathering the matching rows of every
// column copies fewer values than gathering the build columns for every
// row of the probe record, which the aligned output does.
func (j *hashJoin) compactPays(matches int) bool {
	np, nb := len(j.probeOut), len(j.buildOut)
	return matches*(np+nb) < int(j.cur.Rec.NumRows())*nb
}

// stepCompact yields the matching pairs j.pRows x j.bRows of an inner
// join against unique build keys as a record of their own: few probe rows
// match, so copying them beats gathering build columns for rows that are
// dropped.
func (j *hashJoin) stepCompact() (Batch, bool, error) {
	rec, err := j.pairRecord()
	if err != nil {
		return Batch{}, false, err
	}
	var sel []int32
	if j.resid != nil {
		pass, err := j.resid.eval(rec, nil)
		if err != nil {
			rec.Release()
			return Batch{}, false, err
		}
		if len(pass) == 0 {
			rec.Release()
			return Batch{}, false, nil
		}
		if len(pass) < len(j.pRows) {
			j.tmp = append(j.tmp[:0], pass...)
			sel = j.tmp
		}
	}
	j.out = rec
	return Batch{Rec: rec, Sel: sel}, true, nil
}

// alignedRecord is the probe record's columns with the build columns of
// the rows j.align names.
func (j *hashJoin) alignedRecord() (arrow.RecordBatch, error) {
	np := len(j.probeOut)
	cols := make([]arrow.Array, np+len(j.buildOut))
	defer releaseAll(cols)
	for i, c := range j.probeOut {
		cols[i] = j.cur.Rec.Column(c)
		cols[i].Retain()
	}
	for i, c := range j.buildOut {
		a, err := takeArray(j.mem, j.buildRec.Column(c), j.buildTypes[c], j.align)
		if err != nil {
			return nil, err
		}
		cols[np+i] = a
	}
	return array.NewRecordBatch(j.joinedSchema, cols, j.cur.Rec.NumRows()), nil
}

// pairRecord gathers the candidate pairs j.pRows x j.bRows into a joined
// record; a build row below zero gives NULL build columns.
func (j *hashJoin) pairRecord() (arrow.RecordBatch, error) {
	np := len(j.probeOut)
	cols := make([]arrow.Array, np+len(j.buildOut))
	defer releaseAll(cols)
	for i, c := range j.probeOut {
		a, err := takeArray(j.mem, j.cur.Rec.Column(c), j.probeTypes[c], j.pRows)
		if err != nil {
			return nil, err
		}
		cols[i] = a
	}
	for i, c := range j.buildOut {
		a, err := takeArray(j.mem, j.buildRec.Column(c), j.buildTypes[c], j.bRows)
		if err != nil {
			return nil, err
		}
		cols[np+i] = a
	}
	return array.NewRecordBatch(j.joinedSchema, cols, int64(len(j.pRows))), nil
}

// stepPairs joins the current probe batch pair by pair, at most
// outBatchRows pairs per output batch; a left join then yields the probe
// rows that matched nothing.
func (j *hashJoin) stepPairs() (Batch, bool, error) {
	for {
		if j.pos >= len(j.rows) {
			if j.leftTail {
				j.leftTail = false
				j.pRows, j.bRows = j.pRows[:0], j.bRows[:0]
				for _, r := range j.rows {
					if !j.matched[r] {
						j.pRows, j.bRows = append(j.pRows, r), append(j.bRows, -1)
					}
				}
				if len(j.pRows) > 0 {
					rec, err := j.pairRecord()
					if err != nil {
						return Batch{}, false, err
					}
					j.out = rec
					return Batch{Rec: rec}, true, nil
				}
			}
			j.finishProbe()
			return Batch{}, false, nil
		}
		j.pRows, j.bRows = j.pRows[:0], j.bRows[:0]
		j.fill(outBatchRows, false)
		if len(j.pRows) == 0 {
			continue
		}
		rec, err := j.pairRecord()
		if err != nil {
			return Batch{}, false, err
		}
		if j.resid == nil {
			for _, r := range j.pRows {
				j.matched[r] = true
			}
			j.out = rec
			return Batch{Rec: rec}, true, nil
		}
		pass, err := j.resid.eval(rec, nil)
		if err != nil {
			rec.Release()
			return Batch{}, false, err
		}
		for _, k := range pass {
			j.matched[j.pRows[k]] = true
		}
		if len(pass) == 0 {
			rec.Release()
			continue
		}
		var sel []int32
		if len(pass) < len(j.pRows) {
			j.sel = append(j.sel[:0], pass...)
			sel = j.sel
		}
		j.out = rec
		return Batch{Rec: rec, Sel: sel}, true, nil
	}
}

// stepFilter decides a semi or anti join for the whole current probe
// batch and yields its rows that qualify.
func (j *hashJoin) stepFilter() (Batch, bool, error) {
	defer j.finishProbe()
	kind := j.spec.Kind
	if j.resid == nil {
		for i, r := range j.rows {
			g := j.gids[i]
			j.matched[r] = g >= 0 || (kind == JoinAntiNullAware && g == nullKey && j.nrows > 0)
		}
	} else if j.unique && kind != JoinAntiNullAware {
		j.alignCandidates()
		if len(j.sel) > 0 {
			rec, err := j.alignedRecord()
			if err != nil {
				return Batch{}, false, err
			}
			pass, err := j.resid.eval(rec, j.sel)
			rec.Release()
			if err != nil {
				return Batch{}, false, err
			}
			for _, r := range pass {
				j.matched[r] = true
			}
		}
	} else {
		for j.pos < len(j.rows) {
			j.pRows, j.bRows = j.pRows[:0], j.bRows[:0]
			j.fill(outBatchRows, true)
			if len(j.pRows) == 0 {
				continue
			}
			rec, err := j.pairRecord()
			if err != nil {
				return Batch{}, false, err
			}
			pass, err := j.resid.eval(rec, nil)
			rec.Release()
			if err != nil {
				return Batch{}, false, err
			}
			for _, k := range pass {
				j.matched[j.pRows[k]] = true
			}
		}
	}
	want := kind == JoinSemi
	j.sel = j.sel[:0]
	for _, r := range j.rows {
		if j.matched[r] == want {
			j.sel = append(j.sel, r)
		}
	}
	if len(j.sel) == 0 {
		return Batch{}, false, nil
	}
	sel := j.sel
	if len(sel) == int(j.cur.Rec.NumRows()) {
		sel = nil
	}
	return Batch{Rec: j.cur.Rec, Sel: sel}, true, nil
}

// fill appends candidate pairs of the current probe batch to j.pRows and
// j.bRows until there are max of them or the batch is exhausted. With
// skipMatched it passes over the rest of a probe row's candidates once
// one has matched (a semi or anti join needs one).
func (j *hashJoin) fill(max int, skipMatched bool) {
	for len(j.pRows) < max && j.pos < len(j.rows) {
		r := j.rows[j.pos]
		if skipMatched && j.matched[r] {
			j.nextRow()
			continue
		}
		if j.c == startRow {
			j.firstCandidate()
		}
		for j.c >= 0 && len(j.pRows) < max {
			j.pRows = append(j.pRows, r)
			j.bRows = append(j.bRows, j.c)
			if j.stage == stageAll {
				if j.c++; int(j.c) >= j.nrows {
					j.c = -1
				}
			} else {
				j.c = j.next[j.c]
			}
		}
		if j.c < 0 {
			if j.stage == stageChain && j.spec.Kind == JoinAntiNullAware && j.nullKeyGroup >= 0 {
				// A NULL build key makes x NOT IN (...) NULL as well.
				j.stage, j.c = stageNullKeys, j.head[j.nullKeyGroup]
				continue
			}
			j.nextRow()
		}
	}
}

func (j *hashJoin) nextRow() {
	j.pos++
	j.c, j.stage = startRow, stageChain
}

func (j *hashJoin) firstCandidate() {
	j.stage = stageChain
	switch g := j.gids[j.pos]; {
	case g == nullKey:
		// NOT IN with a NULL probe key is decided by whether any build
		// row satisfies the residual at all.
		j.stage, j.c = stageAll, -1
		if j.nrows > 0 {
			j.c = 0
		}
	case g >= 0:
		j.c = j.head[g]
	default:
		j.c = -1
	}
}

func (j *hashJoin) release() {
	if j.out != nil {
		j.out.Release()
		j.out = nil
	}
}

func (j *hashJoin) Close() error {
	if j.closed {
		return nil
	}
	j.closed = true
	j.release()
	j.releaseKeys()
	if j.part {
		j.buildRec = nil
	}
	if j.buildRec != nil {
		j.buildRec.Release()
		j.buildRec = nil
	}
	j.ints, j.strs, j.head, j.tail, j.next = nil, nil, nil, nil, nil
	err := j.probe.Close()
	if j.build != nil {
		if berr := j.build.Close(); err == nil {
			err = berr
		}
	}
	return err
}

// condition is a conjunction evaluated over whole records, through the
// filter's selection kernels when every conjunct has one.
type condition struct {
	kernels []selKernel
	test    boolBinder
	env     *env
	a, b    []int32
}

func compileCondition(conds []sqlplan.Expr, layout Layout) (*condition, error) {
	c := &condition{env: &env{layout: layout}}
	for _, e := range conds {
		k := intCompareKernel(e, c.env)
		if k == nil {
			c.kernels = nil
			break
		}
		c.kernels = append(c.kernels, k)
	}
	if c.kernels != nil {
		return c, nil
	}
	var all sqlplan.Expr = conds[0]
	for _, e := range conds[1:] {
		all = &sqlplan.And{L: all, R: e}
	}
	t, err := compileBool(all, c.env)
	if err != nil {
		return nil, err
	}
	c.test = t
	return c, nil
}

// eval returns the rows of in (every row of rec when in is nil) for which
// the condition is TRUE, valid until the next eval.
func (c *condition) eval(rec arrow.RecordBatch, in []int32) ([]int32, error) {
	if c.kernels != nil {
		cur := in
		for i, k := range c.kernels {
			if i%2 == 0 {
				c.a = k(rec, cur, c.a[:0])
				cur = c.a
			} else {
				c.b = k(rec, cur, c.b[:0])
				cur = c.b
			}
			if len(cur) == 0 {
				break
			}
		}
		return cur, nil
	}
	f := c.test(rec)
	c.a = c.a[:0]
	if in == nil {
		for r, n := 0, int(rec.NumRows()); r < n; r++ {
			if f(r) == triTrue {
				c.a = append(c.a, int32(r))
			}
		}
	} else {
		for _, r := range in {
			if f(int(r)) == triTrue {
				c.a = append(c.a, r)
			}
		}
	}
	return c.a, c.env.takeErr()
}
