import { useSignals } from "@preact/signals-react/runtime";
import { Button, TextField } from "@radix-ui/themes";
import { useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { Select } from "../../../components/ui/select";
import { channelsLoading, groupOptions, searchChannels } from "../../../stores/channels";

const ALL = "__all__";

/** SearchBar searches channels by id, name or key, by model keyword and by group. */
export function SearchBar() {
  useSignals();
  const { t } = useTranslation();
  const [keyword, setKeyword] = useState("");
  const [model, setModel] = useState("");
  const [group, setGroup] = useState("");
  const submit = (e?: FormEvent) => {
    e?.preventDefault();
    void searchChannels({ keyword, model, group });
  };
  return (
    <form className="toolbar" onSubmit={submit} data-testid="channel-search">
      <TextField.Root
        className="grow"
        placeholder={t("channels.search.keyword")}
        value={keyword}
        onChange={(e) => setKeyword(e.target.value)}
        aria-label={t("channels.search.keyword")}
        data-testid="channel-search-keyword"
      />
      <TextField.Root placeholder={t("channels.search.model")} value={model} onChange={(e) => setModel(e.target.value)} aria-label={t("channels.search.model")} />
      <Select.Root
        value={group || ALL}
        onValueChange={(v) => {
          const g = v === ALL ? "" : v;
          setGroup(g);
          void searchChannels({ keyword, model, group: g });
        }}
      >
        <Select.Trigger aria-label={t("channels.search.group")} placeholder={t("channels.search.group")} />
        <Select.Content>
          <Select.Item value={ALL}>{t("channels.search.allGroups")}</Select.Item>
          {groupOptions.value.map((g) => (
            <Select.Item key={g} value={g}>
              {g}
            </Select.Item>
          ))}
        </Select.Content>
      </Select.Root>
      <Button type="submit" loading={channelsLoading.value}>
        {t("channels.search.submit")}
      </Button>
    </form>
  );
}
