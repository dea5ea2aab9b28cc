import { useSignals } from "@preact/signals-react/runtime";
import { Flex, Heading } from "@radix-ui/themes";
import { useEffect } from "react";
import { useTranslation } from "react-i18next";
import { Pagination } from "../../components/pagination";
import { useLocation, useRoute } from "wouter";
import { loadGroups, loadUsers, userSearch, usersDialog, usersList } from "../../stores/users";
import { USER_EDIT_PATH } from "./parts/users-dialogs";
import { SearchBar } from "./parts/search-bar";
import { UsersDialogs } from "./parts/users-dialogs";
import { UsersTable } from "./parts/users-table";

/**
 * UsersPage assembles the search bar, the table, the pager and the drawers. At /user/edit/{id}
 * it opens that user's edit drawer (closing it returns to /user); /user/edit, an account's own
 * edit page, is the personal settings tab.
 */
export default function UsersPage() {
  useSignals();
  const { t } = useTranslation();
  const [, navigate] = useLocation();
  const [editing, params] = useRoute<{ id: string }>(USER_EDIT_PATH);
  useEffect(() => {
    // A visit lists every account, so the search form starts empty too.
    userSearch.value = { keyword: "", group: "" };
    void loadGroups();
    void loadUsers();
  }, []);
  const editId = editing ? Number(params.id) : null;
  useEffect(() => {
    if (editId !== null) {
      if (Number.isInteger(editId) && editId > 0) usersDialog.value = { kind: "edit", id: editId };
      else navigate("/user", { replace: true });
    }
  }, [editId, navigate]);
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
          total={usersList.total.value}
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
