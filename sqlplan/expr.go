package sqlplan

import "github.com/flusslite/fluss/metadata"

// Expr is a scalar SQL expression, converted once from the parser's AST.
// Expressions are inert values; after binding (see Bind*) every ColumnRef
// carries its column index and type, every Param has been replaced by a
// Literal, and every node's Type is known.
type Expr interface {
	// Type is the expression's result type. For an untyped NULL literal it
	// is the zero DataType (Root 0), which fits anywhere.
	Type() metadata.DataType
	// String renders the expression as SQL.
	String() string
	isExpr()
}

// ColumnRef names a column of the scanned table.
type ColumnRef struct {
	Name string
	// Qualifier is the table name or alias the reference was qualified with
	// (t in t.a, or db.t); "" if none.
	Qualifier string
	// Index is the column's index in the table schema; -1 before binding.
	Index int
	T     metadata.DataType

	// qualified makes String print the qualifier (see Qualified).
	qualified bool
}

// Literal is a constant. Value is in metadata's canonical form for T
// (nil for NULL).
type Literal struct {
	Value any
	T     metadata.DataType

	// arg is the caller's Go value when the literal is a bound placeholder,
	// so that converting it to a column's type starts from what was passed.
	arg any
	// outer marks the value of a correlated subquery's outer column,
	// which compares as that column would: converted to the other side's
	// type when nothing is lost, and otherwise as it is, never an error.
	outer bool
}

// Param is a placeholder: ?, :name or $N. Ordinal is 1-based for ? and $N;
// Name is set for :name.
type Param struct {
	Ordinal int
	Name    string
}

// CmpOp is a comparison operator.
type CmpOp uint8

const (
	OpEq         CmpOp = iota + 1 // =
	OpNotEq                       // <> or !=
	OpLt                          // <
	OpLtEq                        // <=
	OpGt                          // >
	OpGtEq                        // >=
	OpNullSafeEq                  // <=>
)

// Compare is L op R.
type Compare struct {
	Op   CmpOp
	L, R Expr
}

// And is L AND R (three-valued).
type And struct{ L, R Expr }

// Or is L OR R (three-valued).
type Or struct{ L, R Expr }

// Not is NOT E (three-valued).
type Not struct{ E Expr }

// IsNull is E IS [NOT] NULL.
type IsNull struct {
	E   Expr
	Not bool
}

// In is E [NOT] IN (List...).
type In struct {
	E    Expr
	List []Expr
	Not  bool
}

// Between is E [NOT] BETWEEN Lo AND Hi.
type Between struct {
	E, Lo, Hi Expr
	Not       bool
}

// Like is E [NOT] LIKE Pattern [ESCAPE Escape]. Matching is byte-wise and
// case-sensitive; '%' and '_' are the wildcards.
type Like struct {
	E, Pattern Expr
	// Escape is the escape character; 0 means the default '\'.
	Escape rune
	Not    bool
}

// Arith is L op R for + - * / DIV %.
type Arith struct {
	Op   byte // '+', '-', '*', '/', 'd' (DIV), '%'
	L, R Expr
	T    metadata.DataType
}

// Neg is -E.
type Neg struct {
	E Expr
}

// Func is a function call, scalar or aggregate.
type Func struct {
	Name     string // lower case
	Args     []Expr
	Distinct bool
	Star     bool // COUNT(*)
	T        metadata.DataType
}

// Case is CASE [Operand] WHEN ... THEN ... [ELSE ...] END.
type Case struct {
	Operand Expr // nil for the searched form
	Whens   []When
	Else    Expr
	T       metadata.DataType
}

// When is one WHEN Cond THEN Result arm.
type When struct{ Cond, Result Expr }

// Default is the DEFAULT of an INSERT's VALUES (MySQL): the value
// generated for an auto-increment column, the column's default for a
// column that has one (InsertPlan.DefaultCells), NULL for any other. It
// appears nowhere else.
type Default struct{}

// Cast is CAST(E AS T) / CONVERT(E, T).
type Cast struct {
	E Expr
	T metadata.DataType
}

var boolType = metadata.BooleanType()

func (e *ColumnRef) Type() metadata.DataType { return e.T }
func (e *Literal) Type() metadata.DataType   { return e.T }
func (e *Param) Type() metadata.DataType     { return metadata.DataType{} }
func (e *Compare) Type() metadata.DataType   { return boolType }
func (e *And) Type() metadata.DataType       { return boolType }
func (e *Or) Type() metadata.DataType        { return boolType }
func (e *Not) Type() metadata.DataType       { return boolType }
func (e *IsNull) Type() metadata.DataType    { return boolType }
func (e *In) Type() metadata.DataType        { return boolType }
func (e *Between) Type() metadata.DataType   { return boolType }
func (e *Like) Type() metadata.DataType      { return boolType }
func (e *Arith) Type() metadata.DataType     { return e.T }
func (e *Neg) Type() metadata.DataType       { return e.E.Type() }
func (e *Func) Type() metadata.DataType      { return e.T }
func (e *Case) Type() metadata.DataType      { return e.T }
func (e *Cast) Type() metadata.DataType      { return e.T }
func (e *Default) Type() metadata.DataType   { return metadata.DataType{} }

func (*ColumnRef) isExpr() {}
func (*Literal) isExpr()   {}
func (*Param) isExpr()     {}
func (*Compare) isExpr()   {}
func (*And) isExpr()       {}
func (*Or) isExpr()        {}
func (*Not) isExpr()       {}
func (*IsNull) isExpr()    {}
func (*In) isExpr()        {}
func (*Between) isExpr()   {}
func (*Like) isExpr()      {}
func (*Arith) isExpr()     {}
func (*Neg) isExpr()       {}
func (*Func) isExpr()      {}
func (*Case) isExpr()      {}
func (*Cast) isExpr()      {}
func (*Default) isExpr()   {}

// Conjuncts splits e at its top-level ANDs.
func Conjuncts(e Expr) []Expr {
	if e == nil {
		return nil
	}
	if a, ok := e.(*And); ok {
		return append(Conjuncts(a.L), Conjuncts(a.R)...)
	}
	return []Expr{e}
}
