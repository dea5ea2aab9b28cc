import { useSignals } from "@preact/signals-react/runtime";
import { Flex, Heading } from "@radix-ui/themes";
import { useEffect } from "react";
import { useTranslation } from "react-i18next";
import { Pagination } from "../../components/pagination";
import { loadGroups, loadUsers, usersList } from "../../stores/users";
import { SearchBar } from "./parts/search-bar";
import { UsersDialogs } from "./parts/users-dialogs";
import { UsersTable } from "./parts/users-table";

/** UsersPage assembles the search bar, the table, the pager and the drawers. */
export default function UsersPage() {
  useSignals();
  const { t } = useTranslation();
  useEffect(() => {
    void loadGroups();
    void loadUsers();
  }, []);
  return (
    <Flex direction="column" gap="4" data-testid="users-page">
      <Heading size="6">{t("userAdmin.title")}</Heading>
      <SearchBar />
      <div>
        <UsersTable />
        <Pagination
          page={usersList.page.value}
          pageSize={usersList.pageSize.value}
          itemCount={usersList.visible.value.length}
          hasMore={usersList.hasMore.value}
          disabled={usersList.loading.value}
          onPageChange={(p) => void usersList.goTo(p).catch(() => {})}
          onPageSizeChange={(s) => void usersList.setPageSize(s).catch(() => {})}
        />
      </div>
      <UsersDialogs />
    </Flex>
  );
}
