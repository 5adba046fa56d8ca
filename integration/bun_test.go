package integration

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/mysqldialect"

	_ "github.com/flusslite/fluss"
)

// Book is a bun model; bun's MySQL dialect inlines every argument as a
// literal, times as strings.
type Book struct {
	bun.BaseModel `bun:"table:books"`

	ID        int64     `bun:"id,pk,autoincrement"`
	Title     string    `bun:"title,notnull"`
	Pages     int32     `bun:"pages"`
	Published time.Time `bun:"published,type:datetime(6)"`
	Price     float64   `bun:"price"`
}

func TestBun(t *testing.T) {
	ctx := context.Background()
	sqldb, err := sql.Open("fluss", t.TempDir())
	require.NoError(t, err)
	db := bun.NewDB(sqldb, mysqldialect.New())
	t.Cleanup(func() { require.NoError(t, db.Close()) })

	_, err = db.NewCreateTable().Model((*Book)(nil)).IfNotExists().Exec(ctx)
	require.NoError(t, err)

	t0 := time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.UTC)
	b := &Book{Title: "Dune", Pages: 412, Published: t0, Price: 9.5}
	_, err = db.NewInsert().Model(b).Exec(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(1), b.ID, "the id comes from LastInsertId")

	more := []Book{
		{Title: "Emma", Pages: 320, Published: t0.AddDate(0, 1, 0), Price: 5},
		{Title: "Ulysses", Pages: 730, Published: t0.AddDate(1, 0, 0), Price: 12.25},
	}
	_, err = db.NewInsert().Model(&more).Exec(ctx)
	require.NoError(t, err)
	require.Equal(t, []int64{2, 3}, []int64{more[0].ID, more[1].ID})

	var got Book
	require.NoError(t, db.NewSelect().Model(&got).Where("id = ?", 1).Scan(ctx))
	require.Equal(t, "Dune", got.Title)
	require.True(t, t0.Equal(got.Published), "microseconds survive the literal: %v", got.Published)

	// A time argument is inlined as '2026-...+00:00'; it compares with
	// the TIMESTAMP column.
	var books []Book
	require.NoError(t, db.NewSelect().Model(&books).Where("published > ?", t0).Order("id").Scan(ctx))
	require.Equal(t, []string{"Emma", "Ulysses"}, titles(books))
	books = nil
	require.NoError(t, db.NewSelect().Model(&books).Where("pages < ?", 500).Where("title IN (?)", bun.In([]string{"Dune", "Emma", "Ulysses"})).Order("pages DESC").Scan(ctx))
	require.Equal(t, []string{"Dune", "Emma"}, titles(books))
	n, err := db.NewSelect().Model((*Book)(nil)).Where("price >= ?", 9.5).Count(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(2), n)

	got.Price = 11
	got.Published = t0.Add(time.Hour)
	_, err = db.NewUpdate().Model(&got).WherePK().Exec(ctx)
	require.NoError(t, err)
	_, err = db.NewUpdate().Model((*Book)(nil)).Set("pages = ?", 500).Where("title = ?", "Emma").Exec(ctx)
	require.NoError(t, err)
	var check Book
	require.NoError(t, db.NewSelect().Model(&check).Where("id = ?", 1).Scan(ctx))
	require.Equal(t, 11.0, check.Price)
	require.True(t, t0.Add(time.Hour).Equal(check.Published))

	// An upsert: bun's ON DUPLICATE KEY UPDATE with VALUES(col).
	up := &Book{ID: 2, Title: "Emma (2nd ed.)", Pages: 330, Published: t0, Price: 6}
	_, err = db.NewInsert().Model(up).On("DUPLICATE KEY UPDATE").Set("title = VALUES(title)").Set("price = VALUES(price)").Exec(ctx)
	require.NoError(t, err)
	check = Book{}
	require.NoError(t, db.NewSelect().Model(&check).Where("id = ?", 2).Scan(ctx))
	require.Equal(t, "Emma (2nd ed.)", check.Title)
	require.Equal(t, 6.0, check.Price)
	require.Equal(t, int32(500), check.Pages, "columns the clause does not update keep their value")

	res, err := db.NewDelete().Model((*Book)(nil)).Where("published >= ?", t0.AddDate(0, 6, 0)).Exec(ctx)
	require.NoError(t, err)
	deleted, err := res.RowsAffected()
	require.NoError(t, err)
	require.Equal(t, int64(1), deleted)
	n, err = db.NewSelect().Model((*Book)(nil)).Count(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(2), n)

	// Garbage where a time is expected is an error naming it.
	_, err = db.NewSelect().Model((*Book)(nil)).Where("published > ?", "not a time").Count(ctx)
	require.ErrorContains(t, err, "not a time")
}

func titles(bs []Book) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.Title
	}
	return out
}
