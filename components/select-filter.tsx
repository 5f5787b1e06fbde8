export interface FilterOption {
  value: string;
  label: string;
}

/**
 * One labelled select of a plain GET filter form (tasks, executions, alerts,
 * audit search): its first, empty option means "no filter on this field".
 */
export function SelectFilter({
  id,
  name,
  label,
  anyLabel,
  options,
  value,
}: {
  id: string;
  name: string;
  label: string;
  anyLabel: string;
  options: readonly FilterOption[];
  value: string | undefined;
}) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} name={name} defaultValue={value ?? ""}>
        <option value="">{anyLabel}</option>
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </div>
  );
}

/** Options whose label is the value itself (tool names, action names). */
export function plainOptions(values: readonly string[]): FilterOption[] {
  return values.map((value) => ({ value, label: value }));
}
