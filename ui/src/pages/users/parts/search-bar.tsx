import { useSignals } from "@preact/signals-react/runtime";
import { Button, Flex, TextField } from "@radix-ui/themes";
import { useTranslation } from "react-i18next";
import { Select } from "../../../components/ui/select";
import { groups, searchUsers, userSearch, usersDialog } from "../../../stores/users";

const ALL = "\u0000all";

/** SearchBar filters users by keyword and group and opens the add-user drawer. */
export function SearchBar() {
  useSignals();
  const { t } = useTranslation();
  const s = userSearch.value;
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        void searchUsers();
      }}
    >
      <Flex gap="2" wrap="wrap" align="center">
        <TextField.Root
          className="grow"
          style={{ minWidth: 240 }}
          placeholder={t("userAdmin.searchPlaceholder")}
          aria-label={t("userAdmin.searchPlaceholder")}
          value={s.keyword}
          onChange={(e) => (userSearch.value = { ...s, keyword: e.target.value })}
          data-testid="user-search"
        />
        <Select.Root value={s.group || ALL} onValueChange={(v) => (userSearch.value = { ...s, group: v === ALL ? "" : v })}>
          <Select.Trigger placeholder={t("userAdmin.groupPlaceholder")} aria-label={t("userAdmin.groupPlaceholder")} data-testid="user-search-group" />
          <Select.Content>
            <Select.Item value={ALL}>{t("userAdmin.allGroups")}</Select.Item>
            {groups.value.map((g) => (
              <Select.Item key={g} value={g}>
                {g}
              </Select.Item>
            ))}
          </Select.Content>
        </Select.Root>
        <Button type="submit" variant="soft" data-testid="user-search-submit">
          {t("userAdmin.search")}
        </Button>
        <Button type="button" onClick={() => (usersDialog.value = { kind: "add" })} data-testid="user-add">
          {t("userAdmin.add")}
        </Button>
      </Flex>
    </form>
  );
}
