import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';

/** A tool category; the set is seeded by a migration. */
@Entity({ tableName: 'categories' })
export class Category {
  @PrimaryKey({ type: 'integer', autoincrement: true })
  id!: number;

  @Property({ type: 'string', length: 100 })
  name!: string;

  @Property({ type: 'string', length: 100, unique: 'categories_slug_key' })
  slug!: string;

  @Property({ type: 'integer', default: 0 })
  position = 0;
}
