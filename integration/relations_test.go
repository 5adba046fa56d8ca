package integration

import (
	"context"
	"database/sql"
	"slices"
	"testing"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/mysqldialect"
	"gorm.io/gorm"
)

// The relations of GORM, sqlx and bun over more than one table. What the
// ORMs send for them: GORM's Joins and bun's belongs-to relations a LEFT
// JOIN with the related table under an alias and its columns as
// `Alias__col`; Preload, association queries and bun's has-many a second
// query with `IN (...)` of the keys the first returned.

// relationForms are the query forms these tests need from fluss beyond a
// single table; a test needing one that is off skips, naming it.
var relationForms = map[string]bool{
	"join":     true, // JOIN ... ON, LEFT JOIN, table aliases, qualified columns, derived tables
	"subquery": true, // IN (SELECT ...), NOT IN, scalar subqueries, EXISTS
}

func needs(t *testing.T, form string) {
	t.Helper()
	if !relationForms[form] {
		t.Skipf("needs %s, which relationForms in relations_test.go has off until fluss runs it", form)
	}
}

type Company struct {
	ID   uint
	Name string `gorm:"size:64"`
}

type Employee struct {
	ID        uint
	Name      string `gorm:"size:64"`
	CompanyID uint
	Company   Company
	Orders    []Order
	Languages []Language `gorm:"many2many:employee_languages"`
}

type Order struct {
	ID         uint
	EmployeeID uint
	Amount     int64
	Items      []Item
}

type Item struct {
	ID      uint
	OrderID uint
	SKU     string `gorm:"size:32"`
}

type Language struct {
	ID   uint
	Code string `gorm:"size:8"`
}

// gormFixture creates two companies, three employees (cid has no
// orders), their orders and items, and the languages they speak.
func gormFixture(t *testing.T) *gorm.DB {
	t.Helper()
	db := openGorm(t, true)
	require.NoError(t, db.AutoMigrate(&Company{}, &Employee{}, &Order{}, &Item{}, &Language{}))
	acme, globex := Company{Name: "acme"}, Company{Name: "globex"}
	require.NoError(t, db.Create(&acme).Error)
	require.NoError(t, db.Create(&globex).Error)
	en, de := Language{Code: "en"}, Language{Code: "de"}
	require.NoError(t, db.Create(&en).Error)
	require.NoError(t, db.Create(&de).Error)
	emps := []Employee{
		{Name: "ann", CompanyID: acme.ID},
		{Name: "bob", CompanyID: globex.ID},
		{Name: "cid", CompanyID: acme.ID},
	}
	require.NoError(t, db.Omit("Company", "Orders", "Languages").Create(&emps).Error)
	orders := []Order{
		{EmployeeID: emps[0].ID, Amount: 5},
		{EmployeeID: emps[0].ID, Amount: 50},
		{EmployeeID: emps[1].ID, Amount: 20},
	}
	require.NoError(t, db.Omit("Items").Create(&orders).Error)
	items := []Item{
		{OrderID: orders[0].ID, SKU: "pen"},
		{OrderID: orders[1].ID, SKU: "ink"},
		{OrderID: orders[1].ID, SKU: "pad"},
	}
	require.NoError(t, db.Create(&items).Error)
	return db
}

func orderAmounts(os []Order) []int64 {
	var out []int64
	for _, o := range os {
		out = append(out, o.Amount)
	}
	slices.Sort(out)
	return out
}

func TestGormPreload(t *testing.T) {
	db := gormFixture(t)

	var emps []Employee
	require.NoError(t, db.Preload("Orders").Order("id").Find(&emps).Error)
	require.Len(t, emps, 3)
	require.Equal(t, []int64{5, 50}, orderAmounts(emps[0].Orders))
	require.Equal(t, []int64{20}, orderAmounts(emps[1].Orders))
	require.Empty(t, emps[2].Orders)

	// Nested: each order's items, in a third query.
	emps = nil
	require.NoError(t, db.Preload("Orders.Items").Order("id").Find(&emps).Error)
	var skus []string
	for _, o := range emps[0].Orders {
		for _, it := range o.Items {
			skus = append(skus, it.SKU)
		}
	}
	slices.Sort(skus)
	require.Equal(t, []string{"ink", "pad", "pen"}, skus)
	require.Empty(t, emps[1].Orders[0].Items)

	// With a condition on the preloaded rows.
	emps = nil
	require.NoError(t, db.Preload("Orders", "amount > ?", 10).Order("id").Find(&emps).Error)
	require.Equal(t, []int64{50}, orderAmounts(emps[0].Orders))
	require.Equal(t, []int64{20}, orderAmounts(emps[1].Orders))

	// Belongs-to by Preload: the companies in one IN query.
	emps = nil
	require.NoError(t, db.Preload("Company").Order("id").Find(&emps).Error)
	require.Equal(t, []string{"acme", "globex", "acme"}, []string{emps[0].Company.Name, emps[1].Company.Name, emps[2].Company.Name})
}

func TestGormAssociation(t *testing.T) {
	db := gormFixture(t)
	var ann Employee
	require.NoError(t, db.First(&ann, "name = ?", "ann").Error)

	var orders []Order
	require.NoError(t, db.Model(&ann).Association("Orders").Find(&orders))
	require.Equal(t, []int64{5, 50}, orderAmounts(orders))
	require.Equal(t, int64(2), db.Model(&ann).Association("Orders").Count())

	// Append sets the foreign key of the new order and inserts it.
	require.NoError(t, db.Model(&ann).Association("Orders").Append(&Order{Amount: 7}))
	orders = nil
	require.NoError(t, db.Model(&ann).Association("Orders").Find(&orders, "amount < ?", 10))
	require.Equal(t, []int64{5, 7}, orderAmounts(orders))

	// many2many: Append writes the join table; Count and Find read
	// through it with a JOIN.
	t.Run("many2many", func(t *testing.T) { gormMany2Many(t, db, ann) })
}

func gormMany2Many(t *testing.T, db *gorm.DB, ann Employee) {
	var en, de Language
	require.NoError(t, db.First(&en, "code = ?", "en").Error)
	require.NoError(t, db.First(&de, "code = ?", "de").Error)
	require.NoError(t, db.Model(&ann).Association("Languages").Append(&en, &de))
	var links int64
	require.NoError(t, db.Table("employee_languages").Where("employee_id = ?", ann.ID).Count(&links).Error)
	require.Equal(t, int64(2), links)
	// Preload of a many2many reads the join table, then the languages,
	// each with IN.
	var withLangs Employee
	require.NoError(t, db.Preload("Languages").First(&withLangs, ann.ID).Error)
	require.Len(t, withLangs.Languages, 2)
	needs(t, "join")
	require.Equal(t, int64(2), db.Model(&ann).Association("Languages").Count())
	var langs []Language
	require.NoError(t, db.Model(&ann).Association("Languages").Find(&langs))
	var codes []string
	for _, l := range langs {
		codes = append(codes, l.Code)
	}
	slices.Sort(codes)
	require.Equal(t, []string{"de", "en"}, codes)
}

func TestGormJoins(t *testing.T) {
	needs(t, "join")
	db := gormFixture(t)

	// Joins("Company"): one LEFT JOIN, the company's columns as
	// `Company__name`.
	var emps []Employee
	require.NoError(t, db.Joins("Company").Order("employees.id").Find(&emps).Error)
	require.Len(t, emps, 3)
	require.Equal(t, []string{"acme", "globex", "acme"}, []string{emps[0].Company.Name, emps[1].Company.Name, emps[2].Company.Name})

	// A condition on the joined table, by its alias.
	emps = nil
	require.NoError(t, db.Joins("Company").Where("Company.name = ?", "acme").Order("employees.id").Find(&emps).Error)
	require.Equal(t, []string{"ann", "cid"}, []string{emps[0].Name, emps[1].Name})

	// InnerJoins with the join's own condition.
	emps = nil
	require.NoError(t, db.InnerJoins("Company", db.Where(&Company{Name: "globex"})).Find(&emps).Error)
	require.Len(t, emps, 1)
	require.Equal(t, "bob", emps[0].Name)

	// Joins with SQL, an aggregate over the join.
	type total struct {
		Name  string
		Total int64
	}
	var totals []total
	require.NoError(t, db.Table("employees").Select("employees.name AS name, SUM(orders.amount) AS total").
		Joins("JOIN orders ON orders.employee_id = employees.id").Group("employees.name").Order("name").Scan(&totals).Error)
	require.Equal(t, []total{{"ann", 55}, {"bob", 20}}, totals)

	// Joins and Preload together.
	emps = nil
	require.NoError(t, db.Joins("Company").Preload("Orders").Where("Company.name = ?", "acme").Order("employees.id").Find(&emps).Error)
	require.Equal(t, []int64{5, 50}, orderAmounts(emps[0].Orders))
	require.Empty(t, emps[1].Orders)
}

// sqlx: joins scanned into structs, the joined table's columns under a
// dotted alias into an embedded or named struct.
type sqlxCompany struct {
	ID   int64  `db:"id"`
	Name string `db:"name"`
}

type sqlxEmployee struct {
	ID      int64       `db:"id"`
	Name    string      `db:"name"`
	Company sqlxCompany `db:"company"`
}

type sqlxRow struct {
	sqlxCompany
	Employee sql.NullString `db:"employee"`
	Orders   sql.NullInt64  `db:"orders"`
}

func TestSqlxJoins(t *testing.T) {
	db, err := sqlx.Open("fluss", t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, db.Close()) })
	db.MustExec("CREATE TABLE companies (id BIGINT, name STRING, PRIMARY KEY (id) NOT ENFORCED)")
	db.MustExec("CREATE TABLE employees (id BIGINT, name STRING, company_id BIGINT, PRIMARY KEY (id) NOT ENFORCED)")
	db.MustExec("CREATE TABLE orders (id BIGINT, employee_id BIGINT, amount BIGINT)")
	db.MustExec("INSERT INTO companies VALUES (1, 'acme'), (2, 'globex'), (3, 'initech')")
	db.MustExec("INSERT INTO employees VALUES (10, 'ann', 1), (11, 'bob', 2), (12, 'cid', 1)")
	db.MustExec("INSERT INTO orders VALUES (1, 10, 5), (2, 10, 50), (3, 11, 20)")
	needs(t, "join")

	// A nested struct by the alias prefix: `company.name`.
	var emps []sqlxEmployee
	require.NoError(t, db.Select(&emps, "SELECT e.id, e.name, c.id AS `company.id`, c.name AS `company.name` "+
		"FROM employees e JOIN companies c ON c.id = e.company_id ORDER BY e.id"))
	require.Equal(t, []sqlxEmployee{
		{10, "ann", sqlxCompany{1, "acme"}},
		{11, "bob", sqlxCompany{2, "globex"}},
		{12, "cid", sqlxCompany{1, "acme"}},
	}, emps)

	// An embedded struct takes the unprefixed columns; a LEFT JOIN without
	// a match gives a NULL name and a count of 0.
	var rows []sqlxRow
	require.NoError(t, db.Select(&rows, "SELECT c.id, c.name, e.name AS employee, COUNT(o.id) AS orders "+
		"FROM companies c LEFT JOIN employees e ON e.company_id = c.id LEFT JOIN orders o ON o.employee_id = e.id "+
		"WHERE e.name IS NOT NULL OR c.id = ? GROUP BY c.id, c.name, e.name ORDER BY c.id, e.name", 3))
	name := func(s string) sql.NullString { return sql.NullString{String: s, Valid: true} }
	count := func(n int64) sql.NullInt64 { return sql.NullInt64{Int64: n, Valid: true} }
	require.Equal(t, []sqlxRow{
		{sqlxCompany{1, "acme"}, name("ann"), count(2)},
		{sqlxCompany{1, "acme"}, name("cid"), count(0)},
		{sqlxCompany{2, "globex"}, name("bob"), count(1)},
		{sqlxCompany{3, "initech"}, sql.NullString{}, count(0)},
	}, rows)

	// Get of one joined row by a placeholder, and sqlx.In on the joined side.
	var one sqlxEmployee
	require.NoError(t, db.Get(&one, "SELECT e.id, e.name, c.id AS `company.id`, c.name AS `company.name` "+
		"FROM employees AS e JOIN companies AS c ON c.id = e.company_id WHERE e.id = ?", 11))
	require.Equal(t, "globex", one.Company.Name)
	q, args, err := sqlx.In("SELECT e.id, e.name, c.id AS `company.id`, c.name AS `company.name` "+
		"FROM employees e JOIN companies c ON c.id = e.company_id WHERE c.name IN (?) ORDER BY e.id", []string{"acme"})
	require.NoError(t, err)
	emps = nil
	require.NoError(t, db.Select(&emps, db.Rebind(q), args...))
	require.Equal(t, []int64{10, 12}, []int64{emps[0].ID, emps[1].ID})
}

// bun: a belongs-to relation (a LEFT JOIN) and a has-many (a second
// query).
type Author struct {
	bun.BaseModel `bun:"table:authors"`

	ID    int64    `bun:"id,pk,autoincrement"`
	Name  string   `bun:"name"`
	Books []*Novel `bun:"rel:has-many,join:id=author_id"`
}

type Novel struct {
	bun.BaseModel `bun:"table:novels"`

	ID       int64   `bun:"id,pk,autoincrement"`
	Title    string  `bun:"title"`
	AuthorID int64   `bun:"author_id"`
	Author   *Author `bun:"rel:belongs-to,join:author_id=id"`
}

func TestBunRelations(t *testing.T) {
	ctx := context.Background()
	sqldb, err := sql.Open("fluss", t.TempDir())
	require.NoError(t, err)
	db := bun.NewDB(sqldb, mysqldialect.New())
	t.Cleanup(func() { require.NoError(t, db.Close()) })
	for _, m := range []any{(*Author)(nil), (*Novel)(nil)} {
		_, err := db.NewCreateTable().Model(m).Exec(ctx)
		require.NoError(t, err)
	}
	authors := []Author{{Name: "austen"}, {Name: "joyce"}, {Name: "woolf"}}
	_, err = db.NewInsert().Model(&authors).Exec(ctx)
	require.NoError(t, err)
	novels := []Novel{
		{Title: "Emma", AuthorID: authors[0].ID},
		{Title: "Persuasion", AuthorID: authors[0].ID},
		{Title: "Ulysses", AuthorID: authors[1].ID},
	}
	_, err = db.NewInsert().Model(&novels).Exec(ctx)
	require.NoError(t, err)

	// has-many: the authors, then their novels in one IN query.
	var as []Author
	require.NoError(t, db.NewSelect().Model(&as).Relation("Books").Order("author.id").Scan(ctx))
	require.Len(t, as, 3)
	titles := func(ns []*Novel) []string {
		var out []string
		for _, n := range ns {
			out = append(out, n.Title)
		}
		slices.Sort(out)
		return out
	}
	require.Equal(t, []string{"Emma", "Persuasion"}, titles(as[0].Books))
	require.Equal(t, []string{"Ulysses"}, titles(as[1].Books))
	require.Empty(t, as[2].Books)

	// has-many with a condition on the related rows.
	as = nil
	require.NoError(t, db.NewSelect().Model(&as).Relation("Books", func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Where("title LIKE ?", "P%")
	}).Order("author.id").Scan(ctx))
	require.Equal(t, []string{"Persuasion"}, titles(as[0].Books))
	require.Empty(t, as[1].Books)

	t.Run("belongs-to", func(t *testing.T) { bunBelongsTo(t, db) })
	t.Run("subquery", func(t *testing.T) { bunSubquery(t, db) })
}

// bunSubquery passes a *bun.SelectQuery as an argument: bun inlines it as
// a parenthesised SELECT.
func bunSubquery(t *testing.T, db *bun.DB) {
	needs(t, "subquery")
	ctx := context.Background()
	var ns []Novel
	austen := db.NewSelect().Model((*Author)(nil)).Column("id").Where("name = ?", "austen")
	require.NoError(t, db.NewSelect().Model(&ns).Where("author_id IN (?)", austen).Order("novel.id").Scan(ctx))
	require.Len(t, ns, 2)
	require.Equal(t, "Emma", ns[0].Title)
	// Authors without a novel, by NOT EXISTS.
	var as []Author
	none := db.NewSelect().Model((*Novel)(nil)).ColumnExpr("1").Where("novel.author_id = author.id")
	require.NoError(t, db.NewSelect().Model(&as).Where("NOT EXISTS (?)", none).Scan(ctx))
	require.Len(t, as, 1)
	require.Equal(t, "woolf", as[0].Name)
}

// bunBelongsTo reads the novels with their authors: one LEFT JOIN, the
// author's columns as author__name.
func bunBelongsTo(t *testing.T, db *bun.DB) {
	needs(t, "join")
	ctx := context.Background()
	var ns []Novel
	require.NoError(t, db.NewSelect().Model(&ns).Relation("Author").Order("novel.id").Scan(ctx))
	require.Len(t, ns, 3)
	require.Equal(t, []string{"austen", "austen", "joyce"}, []string{ns[0].Author.Name, ns[1].Author.Name, ns[2].Author.Name})

	// A condition on the joined table.
	ns = nil
	require.NoError(t, db.NewSelect().Model(&ns).Relation("Author").Where("author.name = ?", "joyce").Scan(ctx))
	require.Len(t, ns, 1)
	require.Equal(t, "Ulysses", ns[0].Title)
}

// TestGormSubqueries passes GORM's subquery forms: a *gorm.DB as an
// argument becomes a parenthesised SELECT, in FROM or in a condition.
func TestGormSubqueries(t *testing.T) {
	db := gormFixture(t)

	// A derived table: each employee's order total.
	type total struct {
		EmployeeID uint
		Total      int64
	}
	var totals []total
	sums := db.Model(&Order{}).Select("employee_id, SUM(amount) AS total").Group("employee_id")
	require.NoError(t, db.Table("(?) AS u", sums).Where("total > ?", 10).Order("employee_id").Find(&totals).Error)
	require.Len(t, totals, 2)
	require.Equal(t, []int64{55, 20}, []int64{totals[0].Total, totals[1].Total})

	needs(t, "subquery")
	// IN (SELECT ...): the employees with an order.
	var emps []Employee
	require.NoError(t, db.Where("id IN (?)", db.Model(&Order{}).Select("employee_id")).Order("id").Find(&emps).Error)
	require.Equal(t, []string{"ann", "bob"}, []string{emps[0].Name, emps[1].Name})

	// NOT IN, and a scalar subquery in a condition.
	emps = nil
	require.NoError(t, db.Where("id NOT IN (?)", db.Model(&Order{}).Select("employee_id")).Find(&emps).Error)
	require.Len(t, emps, 1)
	require.Equal(t, "cid", emps[0].Name)
	var big []Order
	require.NoError(t, db.Where("amount > (?)", db.Model(&Order{}).Select("AVG(amount)")).Find(&big).Error)
	require.Equal(t, []int64{50}, orderAmounts(big))

	// EXISTS correlated with the outer table, as GORM users write it.
	emps = nil
	require.NoError(t, db.Where("EXISTS (?)", db.Model(&Order{}).Select("1").Where("orders.employee_id = employees.id AND orders.amount > ?", 10)).
		Order("id").Find(&emps).Error)
	require.Equal(t, []string{"ann", "bob"}, []string{emps[0].Name, emps[1].Name})
}
