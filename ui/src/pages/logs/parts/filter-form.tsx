import { useSignals } from "@preact/signals-react/runtime";
import { Button, Flex, TextField } from "@radix-ui/themes";
import { useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import type { LogQuery } from "../../../api/logs";
import { parseDateTime, toDateTimeLocal } from "../../../components/format";
import { Field } from "../../../components/ui/field";
import { Select } from "../../../components/ui/select";
import { applyQuery, defaultQuery, logQuery, logsLoading, setLogType } from "../../../stores/logs";
import { toast } from "../../../stores/toast";
import { isAdmin } from "../../../stores/user";

/** LOG_TYPES are the type filter's choices: all, top-up, consumption, admin, system. */
const LOG_TYPES: { value: number; label: string }[] = [
  { value: 0, label: "logs.type.all" },
  { value: 1, label: "logs.type.topup" },
  { value: 2, label: "logs.type.consume" },
  { value: 3, label: "logs.type.manage" },
  { value: 4, label: "logs.type.system" },
];

interface Draft {
  start: string;
  end: string;
  token_name: string;
  model_name: string;
  channel: string;
  username: string;
}

function draftOf(q: LogQuery): Draft {
  return {
    start: q.start_timestamp ? toDateTimeLocal(q.start_timestamp) : "",
    end: q.end_timestamp ? toDateTimeLocal(q.end_timestamp) : "",
    token_name: q.token_name,
    model_name: q.model_name,
    channel: q.channel,
    username: q.username,
  };
}

/** FilterForm holds the log filters (administrators also filter by channel and username) and the type filter. */
export function FilterForm() {
  useSignals();
  const { t } = useTranslation();
  const admin = isAdmin.value;
  const [draft, setDraft] = useState<Draft>(() => draftOf(defaultQuery()));
  const set = (k: keyof Draft, v: string) => setDraft((d) => ({ ...d, [k]: v }));
  // endChosen: the user changed the end; until then it is the default one, which follows the clock.
  const [endChosen, setEndChosen] = useState(false);
  const submit = (e?: FormEvent) => {
    e?.preventDefault();
    const start = parseDateTime(draft.start) ?? 0;
    const end = parseDateTime(draft.end) ?? 0;
    // An empty range would only show an empty table.
    if (start && end && end <= start) {
      toast.error(t("logs.filter.badRange"));
      return;
    }
    const q: LogQuery = {
      type: logQuery.value.type,
      token_name: draft.token_name.trim(),
      model_name: draft.model_name.trim(),
      start_timestamp: start,
      end_timestamp: end,
      channel: admin ? draft.channel.trim() : "",
      username: admin ? draft.username.trim() : "",
    };
    // An end left as the form opened with is the default one, which follows the clock.
    void applyQuery(q, !endChosen && end !== 0);
  };
  const reset = () => {
    const q = defaultQuery();
    setDraft(draftOf(q));
    setEndChosen(false);
    void applyQuery(q, true);
  };
  return (
    <form onSubmit={submit} data-testid="log-filters">
      <Flex gap="3" wrap="wrap" align="end">
        <Field id="log-start" label={t("logs.filter.start")}>
          <TextField.Root id="log-start" type="datetime-local" step={1} value={draft.start} onChange={(e) => set("start", e.target.value)} />
        </Field>
        <Field id="log-end" label={t("logs.filter.end")}>
          <TextField.Root
            id="log-end"
            type="datetime-local"
            step={1}
            value={draft.end}
            onChange={(e) => {
              set("end", e.target.value);
              setEndChosen(true);
            }}
          />
        </Field>
        <Field id="log-token" label={t("logs.filter.tokenName")}>
          <TextField.Root
            id="log-token"
            placeholder={t("logs.filter.optional")}
            value={draft.token_name}
            onChange={(e) => set("token_name", e.target.value)}
            data-testid="log-filter-token"
          />
        </Field>
        <Field id="log-model" label={t("logs.filter.modelName")}>
          <TextField.Root
            id="log-model"
            placeholder={t("logs.filter.optional")}
            value={draft.model_name}
            onChange={(e) => set("model_name", e.target.value)}
            data-testid="log-filter-model"
          />
        </Field>
        {admin ? (
          <>
            <Field id="log-channel" label={t("logs.filter.channel")}>
              <TextField.Root
                id="log-channel"
                inputMode="numeric"
                placeholder={t("logs.filter.optional")}
                value={draft.channel}
                onChange={(e) => set("channel", e.target.value)}
                data-testid="log-filter-channel"
              />
            </Field>
            <Field id="log-username" label={t("logs.filter.username")}>
              <TextField.Root
                id="log-username"
                placeholder={t("logs.filter.optional")}
                value={draft.username}
                onChange={(e) => set("username", e.target.value)}
                data-testid="log-filter-username"
              />
            </Field>
          </>
        ) : null}
        <Field id="log-type" label={t("logs.filter.type")}>
          <Select.Root value={String(logQuery.value.type)} onValueChange={(v) => void setLogType(Number(v))}>
            <Select.Trigger id="log-type" data-testid="log-type" />
            <Select.Content>
              {LOG_TYPES.map((x) => (
                <Select.Item key={x.value} value={String(x.value)}>
                  {t(x.label)}
                </Select.Item>
              ))}
            </Select.Content>
          </Select.Root>
        </Field>
        <Flex gap="2">
          <Button type="submit" loading={logsLoading.value} data-testid="log-query">
            {t("logs.filter.query")}
          </Button>
          <Button type="button" variant="soft" color="gray" onClick={reset}>
            {t("logs.filter.reset")}
          </Button>
        </Flex>
      </Flex>
    </form>
  );
}
