package integration

import (
	"context"
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/mysqldialect"

	"github.com/flusslite/fluss"
)

// A model as first deployed, and the same table a release later with a
// field added.
type Patron struct {
	ID   uint
	Name string `gorm:"size:64"`
}

type PatronV2 struct {
	ID       uint
	Name     string `gorm:"size:64"`
	Nickname *string
	Visits   *int64
	Level    int64 `gorm:"not null;default:1"`
}

func (PatronV2) TableName() string { return "patrons" }

// AutoMigrate of a model that gained fields adds them (ALTER TABLE ...
// ADD), rows stored before read them as NULL, new rows carry them, and a
// further run changes nothing.
func TestGormAutoMigrateAddsColumns(t *testing.T) {
	db, log := openLoggedGorm(t)
	require.NoError(t, db.AutoMigrate(&Patron{}))
	require.NoError(t, db.Create(&Patron{Name: "ada"}).Error)
	log.take()

	require.NoError(t, db.AutoMigrate(&PatronV2{}))
	changes := schemaChanges(log.take())
	require.Len(t, changes, 3, "%q", changes)
	for _, q := range changes {
		require.Contains(t, q, "ALTER TABLE")
		require.Contains(t, q, "ADD")
	}
	nick, visits := "bob", int64(3)
	require.NoError(t, db.Create(&PatronV2{Name: "bob", Nickname: &nick, Visits: &visits}).Error)
	var got []PatronV2
	require.NoError(t, db.Order("id").Find(&got).Error)
	require.Len(t, got, 2)
	require.Equal(t, "ada", got[0].Name)
	require.Nil(t, got[0].Nickname)
	require.Nil(t, got[0].Visits)
	require.Equal(t, int64(1), got[0].Level, "the default, in a row stored before the column")
	require.Equal(t, "bob", *got[1].Nickname)
	require.Equal(t, int64(3), *got[1].Visits)

	require.NoError(t, db.AutoMigrate(&PatronV2{}))
	require.Empty(t, schemaChanges(log.take()), "a second run has nothing to add")
	require.True(t, db.Migrator().HasColumn(&PatronV2{}, "Nickname"))
}

// bun's AddColumn query adds a column the same way.
func TestBunAddColumn(t *testing.T) {
	ctr, err := fluss.NewConnector(t.TempDir())
	require.NoError(t, err)
	sqlDB := sql.OpenDB(ctr)
	defer sqlDB.Close()
	db := bun.NewDB(sqlDB, mysqldialect.New())
	ctx := context.Background()
	type Item struct {
		bun.BaseModel `bun:"table:items"`
		ID            int64 `bun:",pk"`
		Name          string
	}
	_, err = db.NewCreateTable().Model((*Item)(nil)).Exec(ctx)
	require.NoError(t, err)
	_, err = db.NewInsert().Model(&Item{ID: 1, Name: "a"}).Exec(ctx)
	require.NoError(t, err)
	_, err = db.NewAddColumn().Model((*Item)(nil)).ColumnExpr("price DOUBLE").Exec(ctx)
	require.NoError(t, err)
	type ItemV2 struct {
		bun.BaseModel `bun:"table:items"`
		ID            int64 `bun:",pk"`
		Name          string
		Price         *float64
	}
	price := 2.5
	_, err = db.NewInsert().Model(&ItemV2{ID: 2, Name: "b", Price: &price}).Exec(ctx)
	require.NoError(t, err)
	var items []ItemV2
	require.NoError(t, db.NewSelect().Model(&items).Order("id").Scan(ctx))
	require.Len(t, items, 2)
	require.Nil(t, items[0].Price)
	require.Equal(t, 2.5, *items[1].Price)
}
