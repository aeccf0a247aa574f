/** How each slice of the context is made from the operation's base context. */
export type SliceFactories<Base, Slices> = { readonly [Name in keyof Slices]: (base: Base) => Slices[Name] };

/**
 * Makes GraphQL contexts whose slices (the modules' dataloaders and helpers) are built when an
 * operation first reads them, once, and never for an operation that does not. A context lives as long
 * as its operation: a subscription holds its context while it is open, and built eagerly each of the
 * 10,000 subscriptions of bench S10 held four dataloaders it never used. The slices are getters on one
 * prototype shared by every context, so a context costs its base's fields and nothing per slice until
 * a slice is read; once read, the slice is the context's own property.
 */
export function lazyContext<Base extends object, Slices extends object>(factories: SliceFactories<Base, Slices>): (base: Base) => Base & Slices {
  const prototype: object = {};
  for (const name of Object.keys(factories) as (keyof Slices & string)[]) {
    const make = factories[name];
    Object.defineProperty(prototype, name, {
      enumerable: true,
      get(this: Base & Slices) {
        const slice = make(this);
        Object.defineProperty(this, name, { value: slice, enumerable: true });
        return slice;
      },
      // Apollo copies a context with Object.assign onto a new object of the same prototype (when the
      // direct path hands a request over, after it ran): a slice already read is then set, and becomes
      // the copy's own property, the same instance.
      set(this: Base & Slices, slice: unknown) {
        Object.defineProperty(this, name, { value: slice, enumerable: true });
      },
    });
  }
  return (base) => Object.assign(Object.create(prototype) as Base & Slices, base);
}
